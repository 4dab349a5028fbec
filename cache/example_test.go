package cache_test

import (
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/cache"
)

// The executor calls Begin for every request it receives: the first receipt
// runs the handler and calls Complete; a duplicate waits for the original's
// outcome (bounded by its own deadline) and sends the same response.
func ExampleDedupStore() {
	store := cache.NewDedupStore[string](cache.DedupConfig{MaxEntries: 1000})
	key := cache.Key{Correlation: "0f3c", ResponseTopic: "clients/app1/response"}
	expiry := time.Now().Add(5 * time.Second) // receipt time + message expiry interval

	handle := func() string {
		e, first, err := store.Begin(key, expiry)
		if err != nil { // cache.ErrFull
			return "503"
		}
		if first {
			reply := "Hello!:1" // execute the command once
			store.Complete(e, reply, time.Time{})
			return reply
		}
		select {
		case <-e.Done():
			return e.Value() // the same response as the original
		case <-time.After(time.Until(expiry)):
			return "" // the executor lost track; the invoker times out
		}
	}

	fmt.Println(handle()) // first receipt
	fmt.Println(handle()) // duplicate, e.g. re-sent by the broker after a reconnect
	// Output:
	// Hello!:1
	// Hello!:1
}
