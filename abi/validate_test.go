package abi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

const notUTF8 = "bad\xff\xfe"

func TestResponseValidate(t *testing.T) {
	cases := []struct {
		name    string
		r       abi.Response
		wantErr string // "" when valid; else a substring of the error
	}{
		// Valid responses.
		{"valid/zero", abi.Response{}, ""},
		{"valid/200 explicit", abi.Response{Status: abi.StatusOK, Payload: []byte("x")}, ""},
		{"valid/204 without payload", abi.Response{Status: abi.StatusNoContent}, ""},
		{"valid/204 with empty payload", abi.Response{Status: abi.StatusNoContent, Payload: []byte{}}, ""},
		{"valid/400 with property", abi.Response{Status: abi.StatusBadRequest, Message: "bad", PropName: "p", PropValue: "v"}, ""},
		{"valid/415", abi.Response{Status: abi.StatusUnsupportedType, PropName: "Content Type", PropValue: "x/y"}, ""},
		{"valid/app error with status absent", abi.Response{AppError: true, Message: "failed"}, ""},
		{"valid/app error with 500", abi.Response{Status: abi.StatusInternalError, AppError: true}, ""},
		{"valid/format bytes with binary payload", abi.Response{Payload: []byte{0xff, 0}}, ""},
		{"valid/format utf8 with text payload", abi.Response{Format: abi.FormatUTF8, Payload: []byte("größe")}, ""},
		{"valid/format utf8 empty payload", abi.Response{Format: abi.FormatUTF8}, ""},
		{"valid/metadata", abi.Response{Metadata: map[string]string{"k": "v", "_single": "", "a__b": "x"}}, ""},
		{"valid/ttl zero", abi.Response{TTL: ttl(0)}, ""},
		{"valid/ttl positive", abi.Response{TTL: ttl(time.Minute)}, ""},
		{"valid/non-UTF-8 payload without utf8 format", abi.Response{Payload: []byte(notUTF8)}, ""},

		// Rule: statuses reserved for the host.
		{"reserved status/408", abi.Response{Status: abi.StatusRequestTimeout}, "reserved for the host"},
		{"reserved status/499", abi.Response{Status: abi.StatusCancelled}, "reserved for the host"},
		{"reserved status/503", abi.Response{Status: abi.StatusServiceUnavailable}, "reserved for the host"},
		{"reserved status/505", abi.Response{Status: abi.StatusVersionUnsupported}, "reserved for the host"},
		{"reserved status/unknown 201", abi.Response{Status: 201}, "reserved for the host"},
		{"reserved status/unknown 404", abi.Response{Status: 404}, "reserved for the host"},
		{"reserved status/408 with app error", abi.Response{Status: abi.StatusRequestTimeout, AppError: true}, "reserved for the host"},

		// Rule: an application error has status 500.
		{"app error not 500/200", abi.Response{Status: abi.StatusOK, AppError: true}, "must have status 500"},
		{"app error not 500/204", abi.Response{Status: abi.StatusNoContent, AppError: true}, "must have status 500"},
		{"app error not 500/400", abi.Response{Status: abi.StatusBadRequest, AppError: true}, "must have status 500"},
		{"app error not 500/415", abi.Response{Status: abi.StatusUnsupportedType, AppError: true}, "must have status 500"},

		// Rule: 500 needs the application-error flag.
		{"500 without app error", abi.Response{Status: abi.StatusInternalError, Message: "x"}, "application-error flag"},

		// Rule: 204 has no payload.
		{"204 with payload", abi.Response{Status: abi.StatusNoContent, Payload: []byte("x")}, "status 204"},

		// Rule: format indicator is 0 or 1.
		{"format above 1/2", abi.Response{Format: 2}, "format indicator 2"},
		{"format above 1/255", abi.Response{Format: 255}, "format indicator 255"},

		// Rule: TTL is not negative (its encoding would not decode).
		{"negative ttl", abi.Response{TTL: ttl(-time.Second)}, "negative TTL"},

		// Rule: strings are UTF-8.
		{"non-UTF-8/message", abi.Response{AppError: true, Message: notUTF8}, "message is not UTF-8"},
		{"non-UTF-8/content type", abi.Response{ContentType: notUTF8}, "content type is not UTF-8"},
		{"non-UTF-8/property name", abi.Response{Status: abi.StatusBadRequest, PropName: notUTF8}, "property name is not UTF-8"},
		{"non-UTF-8/property value", abi.Response{Status: abi.StatusBadRequest, PropValue: notUTF8}, "property value is not UTF-8"},
		{"non-UTF-8/metadata key", abi.Response{Metadata: map[string]string{notUTF8: "v"}}, "must be UTF-8"},
		{"non-UTF-8/metadata value", abi.Response{Metadata: map[string]string{"k": notUTF8}}, "must be UTF-8"},

		// Rule: a payload marked UTF-8 is UTF-8.
		{"utf8-marked non-UTF-8 payload", abi.Response{Format: abi.FormatUTF8, Payload: []byte(notUTF8)}, "marked UTF-8"},
		{"utf8-marked truncated rune", abi.Response{Format: abi.FormatUTF8, Payload: []byte("gr\xc3")}, "marked UTF-8"},

		// Rule: metadata keys are non-empty and not the protocol's.
		{"metadata key/double underscore", abi.Response{Metadata: map[string]string{"__apErr": "true"}}, "__apErr"},
		{"metadata key/bare double underscore", abi.Response{Metadata: map[string]string{"__": ""}}, "not start with"},
		{"metadata key/empty", abi.Response{Metadata: map[string]string{"": "v"}}, "non-empty"},
		{"metadata key/one bad among good", abi.Response{Metadata: map[string]string{"a": "1", "__stat": "2", "z": "3"}}, "__stat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Validate()
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				// A valid response survives the wire.
				if _, err := abi.DecodeResponse(abi.AppendResponse(nil, &c.r)); err != nil {
					t.Errorf("valid response does not decode: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted %+v, want error containing %q", c.r, c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %q does not contain %q", err, c.wantErr)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Errorf("error %q does not wrap ErrMalformed", err)
			}
			// The decoder applies the same rules.
			if _, err := abi.DecodeResponse(abi.AppendResponse(nil, &c.r)); err == nil {
				t.Errorf("DecodeResponse accepted what Validate refuses")
			}
		})
	}
}

func TestGuestMayReturn(t *testing.T) {
	allowed := map[abi.Status]bool{200: true, 204: true, 400: true, 415: true, 500: true}
	for s := abi.Status(0); s < 1000; s++ {
		if got := abi.GuestMayReturn(s); got != allowed[s] {
			t.Errorf("GuestMayReturn(%d) = %t", s, got)
		}
	}
}

// validDescription returns a fresh Description that passes Validate.
func validDescription() *abi.Description {
	return &abi.Description{
		Version: abi.Version,
		Name:    "mod",
		Commands: []abi.Command{
			{Name: "a"},
			{Name: "b", Idempotent: true, ResponseTTL: time.Minute, ContentTypes: []string{"text/plain"}, Topic: "x/{site}/b"},
		},
	}
}

func TestDescriptionValidate(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(d *abi.Description)
		wantErr []string // nil when valid; else substrings of the error
	}{
		{"valid/base", func(d *abi.Description) {}, nil},
		{"valid/no module name", func(d *abi.Description) { d.Name = "" }, nil},
		{"valid/idempotent without ttl", func(d *abi.Description) { d.Commands[0].Idempotent = true }, nil},
		{"valid/timeout", func(d *abi.Description) { d.Commands[0].Timeout = time.Second }, nil},
		{"valid/token topic", func(d *abi.Description) { d.Commands[0].Topic = "{a}/{b}/c" }, nil},
		{"valid/same content type twice", func(d *abi.Description) { d.Commands[0].ContentTypes = []string{"a/b", "a/b"} }, nil},
		{"valid/max length name", func(d *abi.Description) { d.Commands[0].Name = strings.Repeat("n", abi.MaxCommandName) }, nil},

		// Rule 1: version.
		{"wrong version/0", func(d *abi.Description) { d.Version = 0 }, []string{"version 0", "version 1"}},
		{"wrong version/7", func(d *abi.Description) { d.Version = 7 }, []string{"version 7", "version 1"}},
		{"non-UTF-8 module name", func(d *abi.Description) { d.Name = notUTF8 }, []string{"module name"}},

		// Rule 2: at least one command.
		{"no commands/nil", func(d *abi.Description) { d.Commands = nil }, []string{"no commands"}},
		{"no commands/empty", func(d *abi.Description) { d.Commands = []abi.Command{} }, []string{"no commands"}},

		// Rule 3: names (ValidateCommandName has its own table).
		{"bad name/empty", func(d *abi.Description) { d.Commands[1].Name = "" }, []string{"empty name"}},
		{"bad name/too long", func(d *abi.Description) { d.Commands[1].Name = strings.Repeat("n", abi.MaxCommandName+1) }, []string{"longer than 128"}},
		{"bad name/slash", func(d *abi.Description) { d.Commands[1].Name = "a/b" }, []string{`"a/b"`}},

		// Rule 4: no duplicates.
		{"duplicate name", func(d *abi.Description) { d.Commands[1].Name = "a" }, []string{`"a"`, "twice"}},

		// Rule 5: TTL only on idempotent commands.
		{"ttl on non-idempotent", func(d *abi.Description) { d.Commands[1].Idempotent = false }, []string{`"b"`, "idempotent"}},

		// Rule 6: content types.
		{"empty content type", func(d *abi.Description) { d.Commands[1].ContentTypes = []string{"text/plain", ""} }, []string{`"b"`, "content type"}},
		{"non-UTF-8 content type", func(d *abi.Description) { d.Commands[0].ContentTypes = []string{notUTF8} }, []string{`"a"`, "content type"}},

		// Rule 7: topic patterns.
		{"wildcard topic/plus", func(d *abi.Description) { d.Commands[1].Topic = "x/+/b" }, []string{`"b"`, "wildcards"}},
		{"wildcard topic/hash", func(d *abi.Description) { d.Commands[1].Topic = "x/#" }, []string{`"b"`, "wildcards"}},
		{"wildcard topic/NUL", func(d *abi.Description) { d.Commands[1].Topic = "x/\x00" }, []string{"wildcards"}},
		{"wildcard topic/non-UTF-8", func(d *abi.Description) { d.Commands[1].Topic = notUTF8 }, []string{`"b"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := validDescription()
			c.edit(d)
			err := d.Validate()
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := abi.DecodeDescription(abi.AppendDescription(nil, d)); err != nil {
					t.Errorf("valid description does not decode: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted %+v", d)
			}
			for _, want := range c.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Errorf("error %q does not wrap ErrMalformed", err)
			}
			if _, err := abi.DecodeDescription(abi.AppendDescription(nil, d)); err == nil {
				t.Errorf("DecodeDescription accepted what Validate refuses")
			}
		})
	}
}

func TestValidateCommandName(t *testing.T) {
	cases := []struct {
		name  string
		input string
		ok    bool
	}{
		{"plain", "echo", true},
		{"punctuation", "a.b-c_d:e", true},
		{"unicode", "größe-日本", true},
		{"inner space", "two words", true},
		{"max length", strings.Repeat("x", abi.MaxCommandName), true},
		{"max length multibyte", strings.Repeat("é", abi.MaxCommandName/2), true},

		{"empty", "", false},
		{"too long", strings.Repeat("x", abi.MaxCommandName+1), false},
		{"too long multibyte", strings.Repeat("é", abi.MaxCommandName/2+1), false},
		{"slash", "a/b", false},
		{"leading slash", "/a", false},
		{"plus", "a+b", false},
		{"hash", "a#", false},
		{"open brace", "{a", false},
		{"close brace", "a}", false},
		{"token", "{a}", false},
		{"NUL", "a\x00b", false},
		{"non-UTF-8", "a\xffb", false},
		{"leading space", " a", false},
		{"trailing space", "a ", false},
		{"trailing tab", "a\t", false},
		{"trailing newline", "a\n", false},
		{"only space", " ", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := abi.ValidateCommandName(c.input)
			if c.ok {
				if err != nil {
					t.Errorf("ValidateCommandName(%q): %v", c.input, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateCommandName(%q) accepted it", c.input)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Errorf("error %q does not wrap ErrMalformed", err)
			}
		})
	}
}
