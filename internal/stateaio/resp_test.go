package stateaio

import (
	"errors"
	"testing"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/statestore"
)

// Requests are the bytes the Azure SDKs' clients send (the protocol
// notes' table, from the Go SDK's format tests), binary keys and empty
// values included.
func TestEncodeRequest(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	for _, c := range []struct {
		args [][]byte
		want string
	}{
		{b("SET", "SETKEY2", "VALUE5"), "*3\r\n$3\r\nSET\r\n$7\r\nSETKEY2\r\n$6\r\nVALUE5\r\n"},
		{b("SET", "testkey", "testvalue", "NX", "PX", "10"), "*6\r\n$3\r\nSET\r\n$7\r\ntestkey\r\n$9\r\ntestvalue\r\n$2\r\nNX\r\n$2\r\nPX\r\n$2\r\n10\r\n"},
		{b("SET", "k", ""), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"},
		{b("VDEL", "SETKEY2", "ABC"), "*3\r\n$4\r\nVDEL\r\n$7\r\nSETKEY2\r\n$3\r\nABC\r\n"},
		{b("GET", "k\x00\r\n"), "*2\r\n$3\r\nGET\r\n$4\r\nk\x00\r\n\r\n"},
	} {
		if got := string(encodeRequest(c.args...)); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}

// Every reply form reads, binary values included; anything else, or
// anything after a reply, does not.
func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		in   string
		want reply
	}{
		{"+OK\r\n", reply{kind: '+', text: "OK"}},
		{":-1\r\n", reply{kind: ':', n: -1}},
		{":1\r\n", reply{kind: ':', n: 1}},
		{"$-1\r\n", reply{kind: '$', n: -1}},
		{"$0\r\n\r\n", reply{kind: '$', n: 0, data: []byte{}}},
		{"$5\r\na\r\n\x00b\r\n", reply{kind: '$', n: 5, data: []byte("a\r\n\x00b")}},
		{"-ERR the quota has been exceeded\r\n", reply{kind: '-', text: "the quota has been exceeded"}},
	} {
		got, err := parseReply([]byte(c.in))
		if err != nil || got.kind != c.want.kind || got.text != c.want.text || got.n != c.want.n || string(got.data) != string(c.want.data) {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "OK\r\n", "+OK", "+OK\r\nx", ":x\r\n", "$3\r\nab\r\n", "$3\r\nabcd\r\n", "$-2\r\n", "$-1\r\nx", "_\r\n", "*1\r\n$1\r\na\r\n"} {
		if r, err := parseReply([]byte(bad)); !errors.Is(err, errReply) {
			t.Errorf("%q read as %+v", bad, r)
		}
	}
}

// Each `-ERR` the protocol has, and cmdhost's own server's bounds, is
// the state error that says what it means (the host's status, the
// guest's result): fencing is ErrFenced (which the key's), the quota
// ErrQuota, a refusal or clocks apart ErrUnavailable, a request the
// broker cannot read ErrInvalid, a bound ErrTooLarge.
func TestServiceErrors(t *testing.T) {
	for msg, want := range map[string]error{
		statestore.MsgFencingRequired:                              state.ErrFenced,
		statestore.MsgFencingLower:                                 state.ErrFenced,
		statestore.MsgQuota:                                        state.ErrQuota,
		statestore.MsgNotAuthorized:                                state.ErrUnavailable,
		statestore.MsgTimestampSkew:                                state.ErrUnavailable,
		statestore.MsgFencingSkew:                                  state.ErrInvalid,
		statestore.MsgMalformedTimestamp:                           state.ErrInvalid,
		statestore.MsgMissingTimestamp:                             state.ErrInvalid,
		statestore.MsgSyntax:                                       state.ErrInvalid,
		statestore.MsgUnknownCommand:                               state.ErrInvalid,
		statestore.MsgArity:                                        state.ErrInvalid,
		statestore.MsgKeyLengthZero:                                state.ErrInvalid,
		"too large: a key of 2000 bytes is over the bound of 1024": state.ErrTooLarge,
		"invalid: key \"plugin/x\" starts with plugin/":            state.ErrInvalid,
		"internal error":                                           state.ErrUnavailable,
	} {
		err := serviceError("SET", "plugin/p", []byte("k"), []byte("plugin/p/k"), msg)
		if !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", msg, err, want)
		}
	}
	var fe *state.FenceError
	if err := serviceError("DEL", "plugin/p", []byte("k"), []byte("plugin/p/k"), statestore.MsgFencingRequired); !errors.As(err, &fe) || !fe.Missing || fe.Namespace != "plugin/p" || string(fe.Key) != "k" {
		t.Errorf("a fence's error: %v", err)
	}
}
