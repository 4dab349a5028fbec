package rpc_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
)

// ExampleInvoker calls a command through a broker: an embedded broker on a
// free port, an executor serving one command on the default topic pattern,
// and an invoker that calls it by its topic and gets the reply.
func ExampleInvoker() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	b, err := broker.Start(broker.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println("broker:", err)
		return
	}
	defer b.Close()

	// The executor serves "upper" on rpc/{executorId}/{commandName}, that
	// is rpc/host-1/upper. Start returns once the topic is subscribed.
	exec, err := rpc.NewExecutor(rpc.Config{ExecutorID: "host-1", Session: session.Config{Broker: b.URL()}}, []rpc.Command{{
		Name:  "upper",
		Topic: rpc.DefaultTopic,
		Handler: func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
			return &abi.Response{Payload: bytes.ToUpper(req.Payload), ContentType: req.ContentType}, nil
		},
	}})
	if err != nil {
		fmt.Println("executor:", err)
		return
	}
	if err := exec.Start(ctx); err != nil {
		fmt.Println("executor:", err)
		return
	}
	defer exec.Stop(ctx)

	inv, err := rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: b.URL()}})
	if err != nil {
		fmt.Println("invoker:", err)
		return
	}
	defer inv.Close()

	// Timeout is the request's message expiry: the executor gives up on
	// the request after it, and the call waits no longer for the reply.
	res, err := inv.Invoke(ctx, rpc.Call{Topic: "rpc/host-1/upper", Payload: []byte("hello"),
		ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil {
		fmt.Println("invoke:", err)
		return
	}
	if err := res.Err(); err != nil {
		fmt.Println("reply:", err)
		return
	}
	fmt.Println(res.Status, res.ContentType, string(res.Payload))
	// Output: 200 text/plain HELLO
}
