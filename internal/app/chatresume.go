package app

import (
	"context"

	"github.com/hermes-go/hermes/internal/hooks"
)

// Resume makes the chat continue the stored session id (or a unique prefix)
// in place of the current one (/resume): the current session ends as /new
// would end it, and the next turn goes on from the resumed history. It returns
// the full id.
func (c *Chat) Resume(ctx context.Context, id string) (string, error) {
	full, history, err := c.store.History(ctx, id)
	if err != nil {
		return "", Failf("%v (/sessions lists them)", err)
	}
	old := c.sess.ID
	if full == old {
		return full, nil
	}
	_ = c.store.End(ctx, old)
	c.h.memory.SessionEnd(ctx, old, messagesForMemory(c.sess.Messages))
	c.h.memory.SessionSwitch(ctx, full, old, false)
	if c.hooks.Has(hooks.HookOnSessionFinalize) {
		c.hooks.Fire(ctx, hooks.HookOnSessionFinalize, map[string]any{"session_id": old, "platform": "cli",
			"reason": "resume", "old_session_id": old, "new_session_id": full})
	}
	c.sess = c.ag.ResumeSession(ctx, full, history)
	c.setSessionKey()
	return full, nil
}
