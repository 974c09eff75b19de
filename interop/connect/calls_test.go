package connect_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"connectrpc.com/connect"
)

// kind is a kind of call: connect-go sends a unary call with a GetBody,
// and the two streaming kinds through an io.Pipe without one.
type kind int

const (
	unary kind = iota
	upload
	chat
	kinds
)

func (k kind) String() string { return [...]string{"unary", "client-streaming", "bidi"}[k] }

// clients are connect-go clients of the checked service at one base URL.
type clients [kinds]*connect.Client[msg, msg]

func newClients(hc connect.HTTPClient, base string) *clients {
	opt := connect.WithCodec(codec{})
	return &clients{
		unary:  connect.NewClient[msg, msg](hc, base+procUnary, opt),
		upload: connect.NewClient[msg, msg](hc, base+procUpload, opt),
		chat:   connect.NewClient[msg, msg](hc, base+procChat, opt),
	}
}

// call makes call id of kind k and checks the answer.
func (c *clients) call(ctx context.Context, k kind, id uint64) error {
	switch k {
	case unary:
		return c.callUnary(ctx, id)
	case upload:
		return c.callUpload(ctx, id)
	default:
		return c.callChat(ctx, id)
	}
}

func (c *clients) callUnary(ctx context.Context, id uint64) error {
	req := newMsg(id, 0, 1)
	res, err := c[unary].CallUnary(ctx, connect.NewRequest(req))
	if err != nil {
		return err
	}
	if res.Msg.Call != id || res.Msg.Sum != req.Sum {
		return fmt.Errorf("unary %d: answer %d, %x; want %d, %x", id, res.Msg.Call, res.Msg.Sum, id, req.Sum)
	}
	return nil
}

// callUpload sends every message of call id, then waits for the answer.
func (c *clients) callUpload(ctx context.Context, id uint64) error {
	s := c[upload].CallClientStream(ctx)
	of := messagesOf(id)
	sum := crc32.NewIEEE()
	for seq := range of {
		m := newMsg(id, seq, of)
		sum.Write(m.Payload)
		if err := s.Send(m); err != nil {
			break // CloseAndReceive returns the call's error
		}
	}
	res, err := s.CloseAndReceive()
	if err != nil {
		return err
	}
	if res.Msg.Call != id || res.Msg.Seq != of || res.Msg.Sum != sum.Sum32() {
		return fmt.Errorf("upload %d: answer %d, %d messages, %x; want %d, %d, %x", id, res.Msg.Call, res.Msg.Seq, res.Msg.Sum, id, of, sum.Sum32())
	}
	return nil
}

// callChat sends the messages of call id one at a time, each after the echo
// of the one before: from the first echo on, the server has answered while
// the client still sends.
func (c *clients) callChat(ctx context.Context, id uint64) (err error) {
	s := c[chat].CallBidiStream(ctx)
	defer func() {
		if cerr := s.CloseResponse(); err == nil && cerr != nil {
			err = fmt.Errorf("chat %d: close: %w", id, cerr)
		}
	}()
	of := messagesOf(id)
	for seq := range of {
		m := newMsg(id, seq, of)
		if err := s.Send(m); err != nil {
			break // Receive returns the call's error
		}
		res, err := s.Receive()
		if err != nil {
			s.CloseRequest()
			return err
		}
		if res.Call != id || res.Seq != seq || res.Sum != m.Sum {
			s.CloseRequest()
			return fmt.Errorf("chat %d: echo %d/%d %x; want %d/%d %x", id, res.Call, res.Seq, res.Sum, id, seq, m.Sum)
		}
	}
	if err := s.CloseRequest(); err != nil {
		return err
	}
	if _, err := s.Receive(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = fmt.Errorf("chat %d: a message past the last echo", id)
		}
		return err
	}
	return nil
}
