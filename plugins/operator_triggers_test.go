package plugins

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// triggerDesc declares a command and two triggers.
func triggerDesc() *abi.Description {
	return &abi.Description{Version: abi.Version, Commands: []abi.Command{
		{Name: "echo"},
		{Name: "on-temp", Trigger: "sensors/{device}/temp"},
		{Name: "on-alarm", Trigger: "alarms/#"},
	}}
}

func TestOperatorTriggers(t *testing.T) {
	op, err := ParseOperator("dev.json", []byte(`{"triggers": {"on-temp": {"topic": "sensors/+/temp", "attempts": 5, "concurrency": 2},
		"on-alarm": {}}, "concurrency": 6}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := op.CheckCommands(triggerDesc()); err != nil {
		t.Fatal(err)
	}
	temp := Resolve("dev", abi.Command{Name: "on-temp", Trigger: "sensors/{device}/temp"}, op, Defaults{})
	want := Trigger{Filter: "sensors/{device}/temp", Topic: "sensors/+/temp", Attempts: 5, Concurrency: 2, State: TriggerSubscribed}
	if temp.Trigger == nil || *temp.Trigger != want || temp.Topic != "" {
		t.Fatalf("on-temp resolved %+v (trigger %+v), want %+v", temp, temp.Trigger, want)
	}
	alarm := Resolve("dev", abi.Command{Name: "on-alarm", Trigger: "alarms/#"}, op, Defaults{})
	want = Trigger{Filter: "alarms/#", Topic: "alarms/#", Attempts: DefaultAttempts, Concurrency: 6, State: TriggerSubscribed}
	if *alarm.Trigger != want {
		t.Fatalf("on-alarm resolved %+v, want %+v", *alarm.Trigger, want)
	}
	if c := Resolve("dev", abi.Command{Name: "echo"}, op, Defaults{}); c.Trigger != nil || c.Topic == "" {
		t.Fatalf("a command resolved as a trigger: %+v", c)
	}
	// Not named, or no operator file: not confirmed, and the reason says how.
	none, _ := ParseOperator("dev.json", []byte(`{"triggers": {"on-alarm": {}}}`))
	if c := Resolve("dev", abi.Command{Name: "on-temp", Trigger: "a/b"}, none, Defaults{}); c.Trigger.State != TriggerUnconfirmed ||
		!strings.Contains(c.Trigger.Why, `"triggers": {"on-temp": {}}`) {
		t.Fatalf("unconfirmed: %+v", c.Trigger)
	}
	if c := Resolve("dev", abi.Command{Name: "on-temp", Trigger: "a/b"}, nil, Defaults{}); c.Trigger.State != TriggerUnconfirmed ||
		!strings.Contains(c.Trigger.Why, "no operator file") {
		t.Fatalf("no file: %+v", c.Trigger)
	}

	for file, want := range map[string]string{
		`{"triggers": {"on-temp": {"topic": "rpc/+/temp"}}}`: `"triggers.on-temp.topic": topic filter "rpc/+/temp": topics under rpc/ are the host's`,
		`{"triggers": {"on-temp": {"topic": "#"}}}`:          `starts with a wildcard`,
		`{"triggers": {"on-temp": {"attempts": 0}}}`:         `"triggers.on-temp.attempts": 0 is out of range`,
		`{"triggers": {"on-temp": {"concurrency": 5000}}}`:   `"triggers.on-temp.concurrency"`,
		`{"triggers": {"on-temp": {"retries": 2}}}`:          `unknown field`,
		`{"triggers": {"on-temp": true}}`:                    `is a boolean: write an object`,
		`{"triggers": ["on-temp"]}`:                          `is a list: write an object`,
	} {
		if _, err := ParseOperator("dev.json", []byte(file)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
	for file, want := range map[string]string{
		`{"triggers": {"echo": {}}}`:                             `"triggers.echo": the module declares no trigger "echo" (it declares on-temp, on-alarm)`,
		`{"triggers": {"on-temp": {"topic": "sensors/#"}}}`:      `is not within the module's filter "sensors/{device}/temp"`,
		`{"triggers": {"on-temp": {"topic": "sensors/d1/hum"}}}`: `is not within`,
		`{"commands": {"on-temp": {"onTimeout": "fail"}}}`:       `"commands.on-temp": on-temp is a trigger`,
		`{"commands": {"on-temp": {"allow": ["alice"]}}}`:        `on-temp is a trigger`,
	} {
		op, err := ParseOperator("dev.json", []byte(file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if err := op.CheckCommands(triggerDesc()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
	// A narrower topic, a share group, a timeout and fuel for a trigger pass.
	op, err = ParseOperator("dev.json", []byte(`{"triggers": {"on-temp": {"topic": "$share/g/sensors/d1/temp"}},
		"commands": {"on-temp": {"timeout": "2s", "fuel": 1000}}, "onTimeout": "retry", "retries": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	desc := triggerDesc()
	desc.Commands = desc.Commands[1:] // no non-idempotent command for the plugin's retry policy
	if err := op.CheckCommands(desc); err != nil {
		t.Fatal(err)
	}
}

// TestTriggerFiltersChecked: a module whose trigger would reach the host's
// topics, or chooses a share group, does not load.
func TestTriggerFiltersChecked(t *testing.T) {
	for filter, want := range map[string]string{
		"cmdhost/+/events": "topics under cmdhost/ are the host's",
		"+/temp":           "starts with a wildcard",
		"$share/g/a":       "a module does not choose a share group",
		"$SYS/#":           "topics under $SYS/",
	} {
		desc := &abi.Description{Version: abi.Version, Commands: []abi.Command{{Name: "t", Trigger: filter}}}
		if err := CheckTopics(desc); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "trigger t") {
			t.Errorf("%q: %v, want %q", filter, err, want)
		}
	}
	desc := &abi.Description{Version: abi.Version, Commands: []abi.Command{{Name: "t", Trigger: "sensors/#"}, {Name: "u", Trigger: "sensors/+"}}}
	if err := CheckTopics(desc); err != nil {
		t.Errorf("triggers have no request topics to overlap: %v", err)
	}
}

// TestResolveOverlaps: of two overlapping triggers, the one subscribed
// before keeps its topic; otherwise the first by name; a trigger not
// confirmed takes no topic.
func TestResolveOverlaps(t *testing.T) {
	trig := func(plugin, name, topic string, state TriggerState) Command {
		return Command{Plugin: plugin, Declared: abi.Command{Name: name, Trigger: topic}, Trigger: &Trigger{Filter: topic, Topic: topic, State: state}}
	}
	fresh := func() []Command {
		return []Command{
			trig("p", "a", "sensors/#", TriggerSubscribed),
			trig("q", "b", "sensors/+/temp", TriggerSubscribed),
			trig("q", "c", "alarms/+", TriggerSubscribed),
			trig("q", "d", "alarms/x", TriggerUnconfirmed),
			{Plugin: "p", Declared: abi.Command{Name: "e"}},
		}
	}
	cmds := fresh()
	resolveOverlaps(cmds, nil)
	if cmds[0].Trigger.State != TriggerSubscribed || cmds[1].Trigger.State != TriggerOverlaps || cmds[2].Trigger.State != TriggerSubscribed ||
		cmds[3].Trigger.State != TriggerUnconfirmed {
		t.Fatalf("states %v %v %v %v", cmds[0].Trigger, cmds[1].Trigger, cmds[2].Trigger, cmds[3].Trigger)
	}
	if why := cmds[1].Trigger.Why; !strings.Contains(why, `overlaps "sensors/#" of trigger a (plugin p)`) {
		t.Errorf("why: %s", why)
	}
	// b was subscribed before a came: b keeps it.
	old := []Command{trig("q", "b", "sensors/+/temp", TriggerSubscribed)}
	cmds = fresh()
	resolveOverlaps(cmds, old)
	if cmds[0].Trigger.State != TriggerOverlaps || cmds[1].Trigger.State != TriggerSubscribed {
		t.Fatalf("the trigger subscribed before lost its topic: %v %v", cmds[0].Trigger, cmds[1].Trigger)
	}
}
