package grpc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// The checked service: every message carries the id of its RPC, its index
// in the RPC and a checksum of its payload. The server checks each message
// and counts the RPCs whose handler ran more than once for the same id,
// which a replay of a request the server had processed would cause.
const (
	serviceName = "teebody.interop.Checked"
	codecName   = "teebodytest" // content-type application/grpc+teebodytest
	messages    = 4             // messages per streaming RPC
)

// msg is the only message type of the service.
type msg struct {
	RPC     uint64 // the id of the RPC, unique in a test
	Seq     uint32 // the index of the message in its RPC
	Sum     uint32 // crc32.ChecksumIEEE(Payload), or of what the server got
	Payload []byte
}

// payload returns the deterministic payload of message seq of RPC id, a few
// hundred bytes to a few KiB.
func payload(id uint64, seq uint32) []byte {
	n := 200 + int((id*131+uint64(seq)*17)%3000)
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(id>>(8*(i%8))) ^ byte(i) ^ byte(seq)
	}
	return p
}

// codec marshals a *msg as its three integers, then its payload.
type codec struct{}

func (codec) Name() string { return codecName }

func (codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*msg)
	if !ok {
		return nil, fmt.Errorf("codec: cannot marshal %T", v)
	}
	b := make([]byte, 16, 16+len(m.Payload))
	binary.BigEndian.PutUint64(b, m.RPC)
	binary.BigEndian.PutUint32(b[8:], m.Seq)
	binary.BigEndian.PutUint32(b[12:], m.Sum)
	return append(b, m.Payload...), nil
}

func (codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*msg)
	if !ok || len(data) < 16 {
		return fmt.Errorf("codec: cannot unmarshal %d bytes into %T", len(data), v)
	}
	m.RPC = binary.BigEndian.Uint64(data)
	m.Seq = binary.BigEndian.Uint32(data[8:])
	m.Sum = binary.BigEndian.Uint32(data[12:])
	m.Payload = bytes.Clone(data[16:])
	return nil
}

func init() { encoding.RegisterCodec(codec{}) }

// checked is the server's side of the service.
type checked struct {
	mu   sync.Mutex
	runs map[uint64]int // guarded by mu: handler runs per RPC id
	bad  int            // guarded by mu: messages that failed their check
}

func newChecked() *checked { return &checked{runs: map[uint64]int{}} }

// record notes a run of the handler for RPC id.
func (c *checked) record(id uint64) {
	c.mu.Lock()
	c.runs[id]++
	c.mu.Unlock()
}

// check checks message m, the seq-th of RPC id.
func (c *checked) check(m *msg, id uint64, seq uint32) error {
	if m.RPC == id && m.Seq == seq && m.Sum == crc32.ChecksumIEEE(m.Payload) && bytes.Equal(m.Payload, payload(id, seq)) {
		return nil
	}
	c.mu.Lock()
	c.bad++
	c.mu.Unlock()
	return status.Errorf(codes.DataLoss, "message %d of RPC %d does not check", seq, id)
}

// counts returns the RPC ids the server saw, those it saw more than once,
// and the messages that failed their check.
func (c *checked) counts() (seen, dups, bad int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.runs {
		if n > 1 {
			dups++
		}
	}
	return len(c.runs), dups, c.bad
}

func (c *checked) unary(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var m msg
	if err := dec(&m); err != nil {
		return nil, err
	}
	c.record(m.RPC)
	if err := c.check(&m, m.RPC, 0); err != nil {
		return nil, err
	}
	return &msg{RPC: m.RPC, Sum: m.Sum}, nil
}

// upload takes the messages of a client stream and answers with their
// count and the checksum of their payloads.
func (c *checked) upload(_ any, s grpc.ServerStream) error {
	var id uint64
	var n uint32
	sum := crc32.NewIEEE()
	for {
		var m msg
		err := s.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			return s.SendMsg(&msg{RPC: id, Seq: n, Sum: sum.Sum32()})
		}
		if err != nil {
			return err
		}
		if n == 0 {
			id = m.RPC
			c.record(id)
		}
		if err := c.check(&m, id, n); err != nil {
			return err
		}
		sum.Write(m.Payload)
		n++
	}
}

// chat echoes each message's id, index and checksum.
func (c *checked) chat(_ any, s grpc.ServerStream) error {
	var id uint64
	for n := uint32(0); ; n++ {
		var m msg
		err := s.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 {
			id = m.RPC
			c.record(id)
		}
		if err := c.check(&m, id, n); err != nil {
			return err
		}
		if err := s.SendMsg(&msg{RPC: id, Seq: n, Sum: m.Sum}); err != nil {
			return err
		}
	}
}

// register registers c's service with s.
func (c *checked) register(s *grpc.Server) {
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: serviceName,
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Unary", Handler: c.unary}},
		Streams: []grpc.StreamDesc{
			{StreamName: "Upload", Handler: c.upload, ClientStreams: true},
			{StreamName: "Chat", Handler: c.chat, ClientStreams: true, ServerStreams: true},
		},
	}, c)
}

// The client's side: each call sends RPC id's messages and checks the
// answer.

func newMsg(id uint64, seq uint32) *msg {
	p := payload(id, seq)
	return &msg{RPC: id, Seq: seq, Sum: crc32.ChecksumIEEE(p), Payload: p}
}

func callUnary(ctx context.Context, cc *grpc.ClientConn, id uint64, opts ...grpc.CallOption) error {
	req := newMsg(id, 0)
	var res msg
	if err := cc.Invoke(ctx, "/"+serviceName+"/Unary", req, &res, append(opts, grpc.CallContentSubtype(codecName))...); err != nil {
		return err
	}
	if res.RPC != id || res.Sum != req.Sum {
		return fmt.Errorf("unary %d: answer %d, %x; want %d, %x", id, res.RPC, res.Sum, id, req.Sum)
	}
	return nil
}

var uploadDesc = &grpc.StreamDesc{StreamName: "Upload", ClientStreams: true}

func callUpload(ctx context.Context, cc *grpc.ClientConn, id uint64) error {
	s, err := cc.NewStream(ctx, uploadDesc, "/"+serviceName+"/Upload", grpc.CallContentSubtype(codecName))
	if err != nil {
		return err
	}
	sum := crc32.NewIEEE()
	for seq := range uint32(messages) {
		m := newMsg(id, seq)
		sum.Write(m.Payload)
		if err := s.SendMsg(m); err != nil {
			break // RecvMsg returns the RPC's status
		}
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	var res msg
	if err := s.RecvMsg(&res); err != nil {
		return err
	}
	if res.RPC != id || res.Seq != messages || res.Sum != sum.Sum32() {
		return fmt.Errorf("upload %d: answer %d, %d messages, %x; want %d, %d, %x", id, res.RPC, res.Seq, res.Sum, id, messages, sum.Sum32())
	}
	return nil
}

var chatDesc = &grpc.StreamDesc{StreamName: "Chat", ClientStreams: true, ServerStreams: true}

func callChat(ctx context.Context, cc *grpc.ClientConn, id uint64) error {
	s, err := cc.NewStream(ctx, chatDesc, "/"+serviceName+"/Chat", grpc.CallContentSubtype(codecName))
	if err != nil {
		return err
	}
	for seq := range uint32(messages) {
		m := newMsg(id, seq)
		if err := s.SendMsg(m); err != nil {
			break // RecvMsg returns the RPC's status
		}
		var res msg
		if err := s.RecvMsg(&res); err != nil {
			return err
		}
		if res.RPC != id || res.Seq != seq || res.Sum != m.Sum {
			return fmt.Errorf("chat %d: echo %d/%d %x; want %d/%d %x", id, res.RPC, res.Seq, res.Sum, id, seq, m.Sum)
		}
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	if err := s.RecvMsg(new(msg)); !errors.Is(err, io.EOF) {
		return fmt.Errorf("chat %d: end: %v", id, err)
	}
	return nil
}
