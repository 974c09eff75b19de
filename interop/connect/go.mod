module github.com/teebody/teebody/interop/connect

go 1.26.0

replace github.com/teebody/teebody => ../..

require (
	connectrpc.com/connect v1.21.1
	github.com/teebody/teebody v0.0.0-20261207222943-59172517c9a5
	go.uber.org/goleak v1.3.0
)

require google.golang.org/protobuf v1.36.11 // indirect
