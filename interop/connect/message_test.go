package connect_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// msg is the only message type of the checked service. Every message names
// its call, its place in the call and the call's length, and carries a
// checksum of its payload, so that the server can check each one on its
// own and tell a whole call from a part of one.
type msg struct {
	Call    uint64 // the id of the call, unique in a test
	Seq     uint32 // the index of the message in its call
	Of      uint32 // how many messages the client sends in the call
	Sum     uint32 // crc32.ChecksumIEEE(Payload), or what an answer sums up
	Payload []byte
}

// messagesOf returns how many messages call id sends on a stream: 2 to 5.
func messagesOf(id uint64) uint32 { return 2 + uint32(id%4) }

// payload returns the deterministic payload of message seq of call id, a few
// hundred bytes to a few KiB.
func payload(id uint64, seq uint32) []byte {
	n := 200 + int((id*131+uint64(seq)*17)%3000)
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(id>>(8*(i%8))) ^ byte(i) ^ byte(seq)
	}
	return p
}

// newMsg returns message seq of the of messages of call id.
func newMsg(id uint64, seq, of uint32) *msg {
	p := payload(id, seq)
	return &msg{Call: id, Seq: seq, Of: of, Sum: crc32.ChecksumIEEE(p), Payload: p}
}

// codecName names the codec on the wire: application/connect+teebodytest.
const codecName = "teebodytest"

// codec marshals a *msg as its four integers, then its payload. It stands
// in for protobuf, so that the module needs no generated code.
type codec struct{}

func (codec) Name() string { return codecName }

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*msg)
	if !ok {
		return nil, fmt.Errorf("codec: cannot marshal %T", v)
	}
	b := make([]byte, 20, 20+len(m.Payload))
	binary.BigEndian.PutUint64(b, m.Call)
	binary.BigEndian.PutUint32(b[8:], m.Seq)
	binary.BigEndian.PutUint32(b[12:], m.Of)
	binary.BigEndian.PutUint32(b[16:], m.Sum)
	return append(b, m.Payload...), nil
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*msg)
	if !ok || len(data) < 20 {
		return fmt.Errorf("codec: cannot unmarshal %d bytes into %T", len(data), v)
	}
	m.Call = binary.BigEndian.Uint64(data)
	m.Seq = binary.BigEndian.Uint32(data[8:])
	m.Of = binary.BigEndian.Uint32(data[12:])
	m.Sum = binary.BigEndian.Uint32(data[16:])
	m.Payload = bytes.Clone(data[20:])
	return nil
}
