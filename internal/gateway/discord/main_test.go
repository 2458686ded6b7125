package discord

import (
	"testing"

	"go.uber.org/goleak"
)

// No goroutine of discordgo or the adapter outlives Run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
