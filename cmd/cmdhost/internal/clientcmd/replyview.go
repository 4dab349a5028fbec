package clientcmd

import (
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/rpc"
)

// InvokeReply is what `invoke --json` prints: the reply with its
// properties and the call's timing, in the shape of every --json
// (docs/cli.md). The payload is text when it is valid UTF-8, else base64
// in payloadBase64.
type InvokeReply struct {
	Topic         string            `json:"topic"`
	Status        int               `json:"status"`
	StatusMessage string            `json:"statusMessage,omitempty"`
	AppError      bool              `json:"appError,omitempty"`
	PropertyName  string            `json:"invalidPropertyName,omitempty"`
	PropertyValue string            `json:"invalidPropertyValue,omitempty"`
	ContentType   string            `json:"contentType,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	Timestamp     string            `json:"timestamp,omitempty"`
	Payload       string            `json:"payload,omitempty"`
	PayloadBase64 string            `json:"payloadBase64,omitempty"`
	Duration      string            `json:"duration"`
	Sends         int               `json:"sends"`
	AckedAfter    string            `json:"ackedAfter,omitempty"`
}

func replyView(topic string, r *rpc.Result, took time.Duration) InvokeReply {
	v := InvokeReply{
		Topic: topic, Status: int(r.Status), StatusMessage: r.Message, AppError: r.AppError,
		PropertyName: r.PropName, PropertyValue: r.PropValue, ContentType: r.ContentType,
		Metadata: r.Metadata, Timestamp: r.Timestamp, Duration: took.String(), Sends: r.Sends,
	}
	if utf8.Valid(r.Payload) {
		v.Payload = string(r.Payload)
	} else {
		v.PayloadBase64 = base64.StdEncoding.EncodeToString(r.Payload)
	}
	if r.AckedAfter > 0 {
		v.AckedAfter = r.AckedAfter.String()
	}
	return v
}

// printReplyInfo is invoke -v's account of the reply, on stderr.
func printReplyInfo(w io.Writer, r *rpc.Result, took time.Duration) {
	if r.AckedAfter > 0 {
		fmt.Fprintf(w, "  acked after %v\n", r.AckedAfter.Round(time.Microsecond))
	}
	fmt.Fprintf(w, "← %d after %v (%d send(s)): %d bytes, %s\n", r.Status, took.Round(time.Microsecond), r.Sends, len(r.Payload), base.OrDash(base.Shown(r.ContentType)))
	if r.Message != "" {
		fmt.Fprintf(w, "  status message: %s\n", base.Shown(r.Message))
	}
	if r.AppError {
		fmt.Fprintln(w, "  application error")
	}
	if r.PropName != "" {
		fmt.Fprintf(w, "  invalid property: %s=%q\n", base.Shown(r.PropName), r.PropValue)
	}
	if r.Timestamp != "" {
		fmt.Fprintf(w, "  timestamp: %s\n", base.Shown(r.Timestamp))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Metadata)) {
		fmt.Fprintf(w, "  %s: %s\n", base.Shown(k), base.Shown(r.Metadata[k]))
	}
}
