package transport

// Defects that a test build plants, to show that FuzzUpstream finds them
// (pkg/transport/testdata/plant.sh). Built with -tags teebody_plant, the
// environment variable TEEBODY_PLANT names the one planted; otherwise
// plant is the constant "" and the compiler drops every planted branch.
const (
	plantResend     = "resend"     // send resends after any error
	plantRetryLater = "retrylater" // send's errors all match teebody.ErrNotReplayable, for a 429
	plantSkipEnd    = "skipend"    // sendBuffered's error return skips the Tee's end
)
