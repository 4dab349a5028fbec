package rpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// The set of served commands can change while the executor runs (hot
// reload): SetCommands swaps the route table whole and subscribes or
// unsubscribes only the difference. Requests hold the route they matched,
// so a call in flight finishes on its old route and is answered as usual.

// table returns the current routes.
func (e *Executor) table() []*route {
	if p := e.routes.Load(); p != nil {
		return *p
	}
	return nil
}

// buildRoutes checks commands and makes their routes. A command that old
// already serves on the same filter keeps its execution slots, so the
// queue of its waiting requests carries over a change of settings. A
// command that cannot be served (bad settings, or a filter an earlier
// command of the list has) is left out and named in the error; the others
// get their routes all the same, so that one bad command never stops the
// rest from being served.
func (e *Executor) buildRoutes(commands []Command, old []*route) ([]*route, error) {
	kept := make(map[string]*route, len(old))
	for _, r := range old {
		kept[r.cmd.Name+"\x00"+r.filter] = r
	}
	seen := map[string]string{}
	routes := make([]*route, 0, len(commands))
	var refused []error
	for _, c := range commands {
		r, err := e.newRoute(c)
		if err != nil {
			refused = append(refused, err)
			continue
		}
		if other, dup := seen[r.filter]; dup {
			refused = append(refused, fmt.Errorf("command %s: topic %s is already served by command %s; %s is not served", c.Name, r.filter, other, c.Name))
			continue
		}
		seen[r.filter] = c.Name
		if prev, ok := kept[c.Name+"\x00"+r.filter]; ok && prev.cmd.Concurrency == r.cmd.Concurrency {
			r.slots = prev.slots
		}
		routes = append(routes, r)
	}
	return routes, errors.Join(refused...)
}

// SetCommands serves commands from now on: new topics are subscribed,
// topics no longer served are unsubscribed, and changed settings (handler,
// timeout, idempotency, TTL) apply to requests received from now on. It
// returns once the broker has answered. A command that cannot be served
// (bad settings, or a topic filter that a command earlier in the list
// has) is left out and the others are served: routing never stops for one
// command. The new table is in force even then, and even when a
// (un)subscription failed; the error names each command concerned.
func (e *Executor) SetCommands(ctx context.Context, commands []Command) error {
	old := e.table()
	routes, refused := e.buildRoutes(commands, old)
	e.routes.Store(&routes)

	oldFilters := map[string]bool{}
	for _, r := range old {
		oldFilters[r.filter] = true
	}
	newFilters := map[string]bool{}
	var added, removed []*route
	for _, r := range routes {
		newFilters[r.filter] = true
		if !oldFilters[r.filter] {
			added = append(added, r)
		}
	}
	for _, r := range old {
		if !newFilters[r.filter] {
			removed = append(removed, r)
		}
	}
	if !e.sess.Started() || e.unsubbed.Load() || len(added)+len(removed) == 0 {
		return refused
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.sess.AwaitConnection(ctx); err != nil {
		return errors.Join(refused, fmt.Errorf("updating subscriptions: %w", err))
	}
	return errors.Join(refused, e.subscribe(ctx, added), e.unsubscribe(ctx, removed))
}

// subscribe subscribes the routes' filters at QoS 1.
func (e *Executor) subscribe(ctx context.Context, routes []*route) error {
	if len(routes) == 0 {
		return nil
	}
	sub := &paho.Subscribe{}
	for _, r := range routes {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: r.filter, QoS: 1})
	}
	ack, err := e.sess.Subscribe(ctx, sub)
	// paho returns the SUBACK along with an error for refused filters:
	// name the command whose filter was refused.
	if ack != nil {
		if err := refused("subscribing", routes, ack.Reasons); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	return nil
}

// unsubscribe withdraws the routes' filters.
func (e *Executor) unsubscribe(ctx context.Context, routes []*route) error {
	if len(routes) == 0 {
		return nil
	}
	if err := e.sess.AwaitConnection(ctx); err != nil {
		return fmt.Errorf("unsubscribing: %w", err)
	}
	topics := make([]string, len(routes))
	for i, r := range routes {
		topics[i] = r.filter
	}
	ack, err := e.sess.Unsubscribe(ctx, &paho.Unsubscribe{Topics: topics})
	if ack != nil {
		if err := refused("unsubscribing", routes, ack.Reasons); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("unsubscribing: %w", err)
	}
	e.log.Info("unsubscribed", "topics", topics)
	return nil
}
