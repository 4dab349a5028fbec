package setting_test

import (
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/setting"
)

func TestOr(t *testing.T) {
	const def = 5 * time.Second
	for _, c := range []struct{ v, want time.Duration }{
		{0, def},                     // zero: the default
		{time.Second, time.Second},   // set: kept
		{setting.Off, setting.Off},   // off: kept off
		{-time.Second, -time.Second}, // any negative is off
	} {
		if got := setting.Or(c.v, def); got != c.want {
			t.Errorf("Or(%v, %v) = %v, want %v", c.v, def, got, c.want)
		}
	}
	if !setting.IsOff(setting.Or(setting.Off, 10)) || setting.IsOff(setting.Or(0, 10)) {
		t.Error("Off must stay off and zero take the default")
	}
}

func TestZeroIsOff(t *testing.T) {
	if got := setting.ZeroIsOff(time.Duration(0)); !setting.IsOff(got) {
		t.Errorf("ZeroIsOff(0) = %v, want off", got)
	}
	if got := setting.ZeroIsOff(3 * time.Second); got != 3*time.Second {
		t.Errorf("ZeroIsOff(3s) = %v, want 3s", got)
	}
}
