package proxytest

import (
	"io"

	"golang.org/x/net/http2"
)

// ServeFrames speaks HTTP/2 on c as a server, one frame at a time. It reads
// the client preface, sends empty SETTINGS, and then reads frames: it
// acknowledges SETTINGS and PING frames itself, drops their
// acknowledgements, and hands every other frame to handle with the framer
// to answer on. It returns nil when handle returns false, and otherwise the
// error that ended reading or writing. c must be past any TLS handshake.
func ServeFrames(c io.ReadWriter, handle func(fr *http2.Framer, f http2.Frame) bool) error {
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return err
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				err = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				err = fr.WritePing(true, f.Data)
			}
		default:
			if !handle(fr, f) {
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
}
