package goawaytest

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// downstream relays the server's frames to the client until reading or
// writing fails. A header block's frames go out together; a GOAWAY goes
// out through goAway, which counts what it refuses.
func (c *conn) downstream(fr *frameReader) error {
	for {
		f, err := fr.read()
		if err != nil {
			return err
		}
		switch f.Type {
		case http2.FrameGoAway:
			last, code, debug, err := f.goAway()
			c.readyOnce.Do(func() { close(c.ready) }) // the server's own order
			if err == nil {
				err = c.goAway(last, code, debug)
			}
			if err != nil {
				return err
			}
			continue
		case http2.FrameSettings:
			c.noteSettings(f)
		}
		if f.endsStream() {
			c.endStream(f.StreamID)
		}
		if err := c.writeBlock(fr, f); err != nil {
			return err
		}
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

// writeBlock writes f to the client, and if f begins a header block, the
// rest of the block with it.
func (c *conn) writeBlock(fr *frameReader, f frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for {
		if err := c.cw.WriteRawFrame(f.Type, f.Flags, f.StreamID, f.payload); err != nil {
			return err
		}
		if f.Type != http2.FrameHeaders && f.Type != http2.FramePushPromise && f.Type != http2.FrameContinuation ||
			f.Flags.Has(http2.FlagHeadersEndHeaders) {
			return nil
		}
		var err error
		if f, err = fr.read(); err != nil {
			return err
		}
		if f.Type != http2.FrameContinuation {
			return errBadFrame
		}
	}
}

// noteSettings records the largest SETTINGS_HEADER_TABLE_SIZE of the
// server for the upstream goroutine.
func (c *conn) noteSettings(f frame) {
	if f.Flags.Has(http2.FlagSettingsAck) {
		return
	}
	for p := f.payload; len(p) >= 6; p = p[6:] {
		if http2.SettingID(binary.BigEndian.Uint16(p)) == http2.SettingHeaderTableSize {
			if n := binary.BigEndian.Uint32(p[2:]); n > c.tableSize.Load() {
				c.tableSize.Store(n)
			}
		}
	}
}
