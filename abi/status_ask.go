package abi

// StatusAccepted is the ask extension's ack (PROTOCOL.md "Extensions"): the
// executor has the request and its reply follows. Host only.
const StatusAccepted Status = 202
