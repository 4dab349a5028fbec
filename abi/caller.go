package abi

// Caller is the verified identity of a request's sender: what the host
// knows of who sent it from a source no client controls, never from what
// the request says of itself (its __srcId, InvokerID here, is a claim).
// On cmdhost's embedded broker it is the connection the broker
// authenticated: the user name it logged in with (or the name its client
// certificate maps to) and its client id. On other brokers the host knows
// no verified caller, and Caller is zero (docs/security.md).
//
// It travels in the Request as two optional records (tags 12 and 13,
// ABI.md section 8); a guest built before they existed skips them.
type Caller struct {
	// User is the user name the broker authenticated; "" when the
	// connection logged in as no user (an anonymous client on a loopback
	// listener, or the host's own clients).
	User string
	// ClientID is the MQTT client id of the connection that published the
	// request, as the broker saw it; "" when unknown.
	ClientID string
}

// Verified reports whether the host knows who sent the request: a user
// or at least the connection's client id.
func (c Caller) Verified() bool { return c.User != "" || c.ClientID != "" }

// String names the caller for messages and logs: "user alice (client
// c-1)", "client c-1", or "no verified caller".
func (c Caller) String() string {
	switch {
	case c.User != "" && c.ClientID != "":
		return "user " + c.User + " (client " + c.ClientID + ")"
	case c.User != "":
		return "user " + c.User
	case c.ClientID != "":
		return "client " + c.ClientID
	}
	return "no verified caller"
}
