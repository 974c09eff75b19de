package transport

// The tests of this package give quic-go's error types fakes of the same
// shape, in package transport_test (quicshape_test.go): the library does not
// depend on quic-go, even in its tests. interop/http3 tests the real ones.
func init() {
	quicPackage = "github.com/teebody/teebody/pkg/transport_test"
	http3Package = quicPackage
}
