package abi

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Nested invocation (FnInvoke): a handler asks the host to run one or more
// commands, the branches, all at once, and to wait for them by a Sync
// rule. The host answers with an InvocationResult holding one BranchResult
// per branch. See ABI.md section "Nested invocation".

// Invocation tags.
const (
	invBranch = 1 // nested Branch envelope, repeated
	invSync   = 2 // nested Sync envelope
)

// Branch tags, inside an invBranch record.
const (
	brName        = 1 // string
	brCommand     = 2 // string, required
	brExecutorID  = 3 // string; absent = this host
	brPayload     = 4 // bytes
	brContentType = 5 // string
	brFormat      = 6 // u8: FormatIndicator
	brMetadata    = 7 // map entry, repeated
	brTimeout     = 8 // ms; absent or 0 = none requested
)

// Sync tags, inside an invSync record.
const (
	syStrategy  = 1 // u8: SyncStrategy
	syM         = 2 // u32: with SyncMOfN
	syTimeout   = 3 // ms; absent or 0 = the host's computed default
	syOnTimeout = 4 // u8: SyncPolicy
)

// InvocationResult tags.
const (
	resFailure = 1 // u8: Reason; absent = none
	resMessage = 2 // string
	resBranch  = 3 // nested BranchResult envelope, repeated
)

// BranchResult tags, inside a resBranch record.
const (
	brrName        = 1  // string
	brrOutcome     = 2  // u8: Outcome
	brrReason      = 3  // u8: Reason
	brrStatus      = 4  // u32: Status
	brrAppError    = 5  // bool
	brrMessage     = 6  // string
	brrPayload     = 7  // bytes
	brrContentType = 8  // string
	brrFormat      = 9  // u8: FormatIndicator
	brrMetadata    = 10 // map entry, repeated
	brrElapsed     = 11 // i64 nanoseconds
	brrBudget      = 12 // i64 nanoseconds; absent = unbounded
)

// MaxBranches bounds the branches of one Invocation.
const MaxBranches = 64

// MaxBranchName bounds a branch name's length in bytes.
const MaxBranchName = 128

// Invocation is what a guest hands to FnInvoke: branches that the host
// starts all at once, and the rule for waiting for them.
type Invocation struct {
	Branches []Branch
	Sync     Sync
}

// Branch is one nested call of an Invocation.
type Branch struct {
	// Name keys the branch's result; unique within the Invocation.
	Name string
	// Command is the command to call.
	Command string
	// ExecutorID names the executor that serves Command: empty (or the
	// host's own id) calls a plugin of this host directly, another id
	// sends the request through the broker to that executor.
	ExecutorID  string
	Payload     []byte
	ContentType string
	Format      FormatIndicator
	// Metadata becomes the child's user properties. The host sets
	// ChainKey itself.
	Metadata map[string]string
	// Timeout bounds the call; 0 requests none. The child's deadline is
	// the earliest of the caller's own deadline, this timeout and the
	// child command's execution timeout. Sent in whole milliseconds,
	// rounded up.
	Timeout time.Duration
}

// SyncStrategy says how many branches must arrive for a fan-out to
// complete.
type SyncStrategy uint8

// Sync strategies.
const (
	SyncAll  SyncStrategy = 0 // every branch
	SyncAny  SyncStrategy = 1 // the first one
	SyncMOfN SyncStrategy = 2 // Sync.M of them
)

func (s SyncStrategy) String() string {
	switch s {
	case SyncAll:
		return "all"
	case SyncAny:
		return "any"
	case SyncMOfN:
		return "m_of_n"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// SyncPolicy is what a sync timeout does.
type SyncPolicy uint8

// Sync timeout policies.
const (
	// SyncProceedWithAvailable returns the branches that arrived; the
	// others are cancelled and reported OutcomeNotArrived.
	SyncProceedWithAvailable SyncPolicy = 0
	// SyncFail fails the whole invocation (ReasonSyncTimeout).
	SyncFail SyncPolicy = 1
)

func (p SyncPolicy) String() string {
	switch p {
	case SyncProceedWithAvailable:
		return "proceed_with_available"
	case SyncFail:
		return "fail"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// Sync is the rule for waiting for an Invocation's branches. The zero
// value waits for all of them, with the host's default sync timeout, and
// proceeds with what arrived when it fires.
type Sync struct {
	Strategy SyncStrategy
	// M is how many branches SyncMOfN waits for, 1 <= M <= branches.
	M uint32
	// Timeout bounds the wait measured from the first branch's arrival
	// (wait time, not total time); 0 takes the host's default. Sent in
	// whole milliseconds, rounded up.
	Timeout   time.Duration
	OnTimeout SyncPolicy
}

// Outcome is how a branch ended.
type Outcome uint8

// Branch outcomes.
const (
	// OutcomeDone: the child answered; Status and the rest are its answer,
	// whatever the status.
	OutcomeDone Outcome = 0
	// OutcomeTimedOut: the child's deadline cut it (Status 408).
	OutcomeTimedOut Outcome = 1
	// OutcomeNotArrived: the sync ended before the branch arrived (its
	// strategy was met, or its timeout fired); the child was cancelled.
	OutcomeNotArrived Outcome = 2
	// OutcomeError: the call failed without an answer; Reason says why.
	OutcomeError Outcome = 3
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeTimedOut:
		return "timed_out"
	case OutcomeNotArrived:
		return "not_arrived"
	case OutcomeError:
		return "error"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Reason says why a branch or a whole invocation failed.
type Reason uint8

// Failure reasons.
const (
	ReasonNone Reason = 0
	// ReasonInvalid: the invocation breaks the rules (Invocation.Validate).
	ReasonInvalid Reason = 1
	// ReasonUnavailable: the host does not offer nested invocation, or
	// not the remote kind.
	ReasonUnavailable Reason = 2
	// ReasonCycle: the command is already in the call chain.
	ReasonCycle Reason = 3
	// ReasonDepth: the call chain reached the host's depth limit.
	ReasonDepth Reason = 4
	// ReasonUnknownCommand: no plugin of this host serves the command.
	ReasonUnknownCommand Reason = 5
	// ReasonHostFault: the child trapped, ran out of memory, gave no
	// valid response, or the host could not send the request.
	ReasonHostFault Reason = 6
	// ReasonCanceled: the caller's call was cancelled.
	ReasonCanceled Reason = 7
	// ReasonSyncTimeout: the sync timeout fired under SyncFail.
	ReasonSyncTimeout Reason = 8
)

var reasonNames = [...]string{"none", "invalid", "unavailable", "cycle", "depth", "unknown_command",
	"host_fault", "canceled", "sync_timeout"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// InvocationResult is what FnInvoke hands back. Failure is ReasonNone
// unless the invocation as a whole failed; Branches holds one result per
// branch, in the Invocation's order (a failed invocation may hold none).
type InvocationResult struct {
	Failure  Reason
	Message  string
	Branches []BranchResult
}

// Err returns the invocation's failure as an *InvocationError, or nil.
func (r *InvocationResult) Err() error {
	if r.Failure == ReasonNone {
		return nil
	}
	return &InvocationError{Reason: r.Failure, Message: r.Message}
}

// Branch returns the result of the named branch, or nil.
func (r *InvocationResult) Branch(name string) *BranchResult {
	for i := range r.Branches {
		if r.Branches[i].Name == name {
			return &r.Branches[i]
		}
	}
	return nil
}

// BranchResult is how one branch ended and, with OutcomeDone, the child's
// answer.
type BranchResult struct {
	Name    string
	Outcome Outcome
	Reason  Reason // with OutcomeError
	// Status is the child's protocol status with OutcomeDone (its answer
	// may be an error status), 408 with OutcomeTimedOut, 0 otherwise.
	Status      Status
	AppError    bool
	Message     string
	Payload     []byte
	ContentType string
	Format      FormatIndicator
	Metadata    map[string]string
	// Elapsed is how long the branch ran, until its answer or until the
	// sync ended without it.
	Elapsed time.Duration
	// Budget is the time the child was given (its deadline less its
	// start); 0 when nothing bounded it.
	Budget time.Duration
}

// OK reports whether the child answered with a success status.
func (r *BranchResult) OK() bool {
	return r.Outcome == OutcomeDone && (r.Status == StatusOK || r.Status == StatusNoContent)
}

// Err returns nil when the child answered with a success status, else a
// *BranchError.
func (r *BranchResult) Err() error {
	if r.OK() {
		return nil
	}
	return &BranchError{Branch: r.Name, Outcome: r.Outcome, Reason: r.Reason, Status: r.Status,
		AppError: r.AppError, Message: r.Message}
}

// InvocationError is a nested invocation that failed as a whole.
type InvocationError struct {
	Reason  Reason
	Message string
}

func (e *InvocationError) Error() string {
	return "nested invocation failed (" + e.Reason.String() + "): " + e.Message
}

// BranchError is a branch that got no answer, or an error status.
type BranchError struct {
	Branch   string
	Outcome  Outcome
	Reason   Reason
	Status   Status
	AppError bool
	Message  string
}

func (e *BranchError) Error() string {
	var what string
	switch {
	case e.Outcome == OutcomeError:
		what = e.Reason.String()
	case e.Outcome == OutcomeDone && e.AppError:
		what = fmt.Sprintf("status %d (application error)", e.Status)
	case e.Outcome == OutcomeDone:
		what = fmt.Sprintf("status %d", e.Status)
	default:
		what = e.Outcome.String()
	}
	msg := "nested call " + e.Branch + ": " + what
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// ceilMillis is d in whole milliseconds, rounded up so that a positive
// duration never becomes 0 ("none").
func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// AppendInvocation appends the encoding of inv to dst and returns the
// result.
func AppendInvocation(dst []byte, inv *Invocation) []byte {
	for i := range inv.Branches {
		b := &inv.Branches[i]
		var at int
		dst, at = beginRecord(dst, invBranch)
		if b.Name != "" {
			dst = appendString(dst, brName, b.Name)
		}
		dst = appendString(dst, brCommand, b.Command)
		if b.ExecutorID != "" {
			dst = appendString(dst, brExecutorID, b.ExecutorID)
		}
		if len(b.Payload) > 0 {
			dst = appendRecord(dst, brPayload, b.Payload)
		}
		if b.ContentType != "" {
			dst = appendString(dst, brContentType, b.ContentType)
		}
		if b.Format != FormatBytes {
			dst = appendU8(dst, brFormat, byte(b.Format))
		}
		dst = appendMap(dst, brMetadata, b.Metadata)
		if b.Timeout > 0 {
			dst = appendI64(dst, brTimeout, ceilMillis(b.Timeout))
		}
		dst = endRecord(dst, at)
	}
	s := &inv.Sync
	if *s != (Sync{}) {
		var at int
		dst, at = beginRecord(dst, invSync)
		if s.Strategy != SyncAll {
			dst = appendU8(dst, syStrategy, byte(s.Strategy))
		}
		if s.M != 0 {
			dst = appendU32(dst, syM, s.M)
		}
		if s.Timeout > 0 {
			dst = appendI64(dst, syTimeout, ceilMillis(s.Timeout))
		}
		if s.OnTimeout != SyncProceedWithAvailable {
			dst = appendU8(dst, syOnTimeout, byte(s.OnTimeout))
		}
		dst = endRecord(dst, at)
	}
	return dst
}

// DecodeInvocation decodes an encoded Invocation and checks it with
// Invocation.Validate. The result shares no memory with buf.
func DecodeInvocation(buf []byte) (*Invocation, error) {
	inv := &Invocation{}
	rd := reader{buf: buf, singular: bits(invSync)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case invBranch:
			if len(inv.Branches) == MaxBranches {
				return nil, malformed("more than %d branches", MaxBranches)
			}
			var b Branch
			b, err = decodeBranch(v)
			inv.Branches = append(inv.Branches, b)
		case invSync:
			inv.Sync, err = decodeSync(v)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := inv.Validate(); err != nil {
		return nil, err
	}
	return inv, nil
}

func decodeBranch(buf []byte) (Branch, error) {
	var b Branch
	rd := reader{buf: buf, singular: bits(brName, brCommand, brExecutorID, brPayload, brContentType,
		brFormat, brTimeout)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return b, fmt.Errorf("branch: %w", err)
		}
		if !ok {
			return b, nil
		}
		switch tag {
		case brName:
			b.Name = string(v)
		case brCommand:
			b.Command = string(v)
		case brExecutorID:
			b.ExecutorID = string(v)
		case brPayload:
			b.Payload = copyBytes(v)
		case brContentType:
			b.ContentType = string(v)
		case brFormat:
			var f byte
			f, err = u8(tag, v)
			b.Format = FormatIndicator(f)
		case brMetadata:
			err = mapEntry(tag, v, &b.Metadata)
		case brTimeout:
			var ms int64
			ms, err = durationMillis(tag, v)
			b.Timeout = time.Duration(ms) * time.Millisecond
		}
		if err != nil {
			return b, fmt.Errorf("branch %q: %w", b.Name, err)
		}
	}
}

func decodeSync(buf []byte) (Sync, error) {
	var s Sync
	rd := reader{buf: buf, singular: bits(syStrategy, syM, syTimeout, syOnTimeout)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return s, fmt.Errorf("sync: %w", err)
		}
		if !ok {
			return s, nil
		}
		var b byte
		switch tag {
		case syStrategy:
			b, err = u8(tag, v)
			s.Strategy = SyncStrategy(b)
		case syM:
			s.M, err = u32(tag, v)
		case syTimeout:
			var ms int64
			ms, err = durationMillis(tag, v)
			s.Timeout = time.Duration(ms) * time.Millisecond
		case syOnTimeout:
			b, err = u8(tag, v)
			s.OnTimeout = SyncPolicy(b)
		}
		if err != nil {
			return s, fmt.Errorf("sync: %w", err)
		}
	}
}

// Validate reports the first way inv breaks the rules of an Invocation.
func (inv *Invocation) Validate() error {
	n := len(inv.Branches)
	switch {
	case n == 0:
		return malformed("an invocation needs at least one branch")
	case n > MaxBranches:
		return malformed("%d branches; at most %d", n, MaxBranches)
	}
	names := make(map[string]struct{}, n)
	for i := range inv.Branches {
		b := &inv.Branches[i]
		if err := b.validate(); err != nil {
			return err
		}
		if _, dup := names[b.Name]; dup {
			return malformed("branch name %q repeated", b.Name)
		}
		names[b.Name] = struct{}{}
	}
	s := &inv.Sync
	switch {
	case s.Strategy > SyncMOfN:
		return malformed("sync strategy %d (want 0 all, 1 any or 2 m_of_n)", s.Strategy)
	case s.Strategy == SyncMOfN && (s.M < 1 || int(s.M) > n):
		return malformed("m_of_n with m = %d for %d branches (want 1 <= m <= n)", s.M, n)
	case s.Strategy != SyncMOfN && s.M != 0:
		return malformed("m = %d is only for the m_of_n strategy", s.M)
	case s.OnTimeout > SyncFail:
		return malformed("sync on_timeout %d (want 0 proceed_with_available or 1 fail)", s.OnTimeout)
	case s.Timeout < 0:
		return malformed("negative sync timeout %v", s.Timeout)
	}
	return nil
}

func (b *Branch) validate() error {
	switch {
	case len(b.Name) > MaxBranchName:
		return malformed("branch name %.20q… is longer than %d bytes", b.Name, MaxBranchName)
	case !utf8.ValidString(b.Name):
		return malformed("branch name %q is not UTF-8", b.Name)
	}
	if err := ValidateCommandName(b.Command); err != nil {
		return fmt.Errorf("branch %q: %w", b.Name, err)
	}
	if b.ExecutorID != "" && !validExecutorID(b.ExecutorID) {
		return malformed("branch %q: executor id %q must be printable ASCII without space, '/', '+', '#' or braces", b.Name, b.ExecutorID)
	}
	switch {
	case b.Format > FormatUTF8:
		return malformed("branch %q: payload format indicator %d (want 0 or 1)", b.Name, b.Format)
	case b.Format == FormatUTF8 && !utf8.Valid(b.Payload):
		return malformed("branch %q: payload is marked UTF-8 but is not", b.Name)
	case !utf8.ValidString(b.ContentType):
		return malformed("branch %q: content type is not UTF-8", b.Name)
	case b.Timeout < 0:
		return malformed("branch %q: negative timeout %v", b.Name, b.Timeout)
	}
	for k, v := range b.Metadata {
		if k == "" || strings.HasPrefix(k, "__") {
			return malformed("branch %q: metadata key %q: keys must be non-empty and not start with \"__\"", b.Name, k)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return malformed("branch %q: metadata %q: keys and values must be UTF-8", b.Name, k)
		}
	}
	return nil
}

// validExecutorID accepts what fits in one topic level of the host's
// topics: printable ASCII without space, '/', '+', '#', '{' or '}'.
func validExecutorID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' || strings.IndexByte("/+#{}", c) >= 0 {
			return false
		}
	}
	return true
}

// AppendInvocationResult appends the encoding of r to dst and returns the
// result.
func AppendInvocationResult(dst []byte, r *InvocationResult) []byte {
	if r.Failure != ReasonNone {
		dst = appendU8(dst, resFailure, byte(r.Failure))
	}
	if r.Message != "" {
		dst = appendString(dst, resMessage, r.Message)
	}
	for i := range r.Branches {
		b := &r.Branches[i]
		var at int
		dst, at = beginRecord(dst, resBranch)
		if b.Name != "" {
			dst = appendString(dst, brrName, b.Name)
		}
		if b.Outcome != OutcomeDone {
			dst = appendU8(dst, brrOutcome, byte(b.Outcome))
		}
		if b.Reason != ReasonNone {
			dst = appendU8(dst, brrReason, byte(b.Reason))
		}
		if b.Status != 0 {
			dst = appendU32(dst, brrStatus, uint32(b.Status))
		}
		if b.AppError {
			dst = appendU8(dst, brrAppError, 1)
		}
		if b.Message != "" {
			dst = appendString(dst, brrMessage, b.Message)
		}
		if len(b.Payload) > 0 {
			dst = appendRecord(dst, brrPayload, b.Payload)
		}
		if b.ContentType != "" {
			dst = appendString(dst, brrContentType, b.ContentType)
		}
		if b.Format != FormatBytes {
			dst = appendU8(dst, brrFormat, byte(b.Format))
		}
		dst = appendMap(dst, brrMetadata, b.Metadata)
		if b.Elapsed != 0 {
			dst = appendI64(dst, brrElapsed, int64(b.Elapsed))
		}
		if b.Budget != 0 {
			dst = appendI64(dst, brrBudget, int64(b.Budget))
		}
		dst = endRecord(dst, at)
	}
	return dst
}

// DecodeInvocationResult decodes an encoded InvocationResult. The result
// shares no memory with buf. Outcome and Reason values this version does
// not know are kept as they are: a later host may add some.
func DecodeInvocationResult(buf []byte) (*InvocationResult, error) {
	return decodeInvocationResult(buf, false)
}

// DecodeInvocationResultShared decodes like DecodeInvocationResult, except
// that the result's strings and byte slices share buf's memory (see
// DecodeRequestShared): for guests, which fetch each result into a fresh
// buffer.
func DecodeInvocationResultShared(buf []byte) (*InvocationResult, error) {
	return decodeInvocationResult(buf, true)
}

func decodeInvocationResult(buf []byte, shared bool) (*InvocationResult, error) {
	str, bytes := copyString, copyBytes
	if shared {
		str, bytes = shareString, shareBytes
	}
	r := &InvocationResult{}
	rd := reader{buf: buf, singular: bits(resFailure, resMessage)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return r, nil
		}
		switch tag {
		case resFailure:
			var b byte
			b, err = u8(tag, v)
			r.Failure = Reason(b)
		case resMessage:
			r.Message = str(v)
		case resBranch:
			var b BranchResult
			b, err = decodeBranchResult(v, str, bytes)
			r.Branches = append(r.Branches, b)
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeBranchResult(buf []byte, str func([]byte) string, bytes func([]byte) []byte) (BranchResult, error) {
	var b BranchResult
	rd := reader{buf: buf, singular: bits(brrName, brrOutcome, brrReason, brrStatus, brrAppError, brrMessage,
		brrPayload, brrContentType, brrFormat, brrElapsed, brrBudget)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return b, fmt.Errorf("branch result: %w", err)
		}
		if !ok {
			return b, nil
		}
		var u byte
		var n int64
		switch tag {
		case brrName:
			b.Name = str(v)
		case brrOutcome:
			u, err = u8(tag, v)
			b.Outcome = Outcome(u)
		case brrReason:
			u, err = u8(tag, v)
			b.Reason = Reason(u)
		case brrStatus:
			var s uint32
			s, err = u32(tag, v)
			b.Status = Status(s)
		case brrAppError:
			b.AppError, err = boolean(tag, v)
		case brrMessage:
			b.Message = str(v)
		case brrPayload:
			b.Payload = bytes(v)
		case brrContentType:
			b.ContentType = str(v)
		case brrFormat:
			u, err = u8(tag, v)
			b.Format = FormatIndicator(u)
		case brrMetadata:
			err = mapEntry(tag, v, &b.Metadata)
		case brrElapsed:
			n, err = i64(tag, v)
			b.Elapsed = time.Duration(n)
		case brrBudget:
			n, err = i64(tag, v)
			b.Budget = time.Duration(n)
		}
		if err != nil {
			return b, fmt.Errorf("branch result %q: %w", b.Name, err)
		}
	}
}

// ChainKey is the metadata key (an MQTT user property on the wire) that
// carries the nested call chain: the callers of a request, outermost
// first, each as "executorId/command", joined by '>'. The host sets it on
// every nested request and checks it for cycles and depth; a guest may
// read it in Request.Metadata but cannot set it.
const ChainKey = "cmdhost-chain"
