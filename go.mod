module github.com/teebody/teebody

go 1.26.0

require (
	go.uber.org/goleak v1.2.0
	golang.org/x/net v0.56.0
	golang.org/x/sync v0.21.0
)

require golang.org/x/text v0.38.0 // indirect
