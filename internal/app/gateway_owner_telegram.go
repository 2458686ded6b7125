package app

import (
	"context"
	"strconv"

	"github.com/hermes-go/hermes/internal/gateway/telegram"
)

// telegramSeen dedupes polled Telegram updates cluster-wide (nil without a
// cluster): the next owner of the long poll gets again the batch its
// predecessor received and had not confirmed, and answers only what no
// process took. It shares the webhook queue's dedupe table.
func (w *gatewayOwners) telegramSeen() func(ctx context.Context, updateID int64) (bool, error) {
	if w == nil || w.node == nil {
		return nil
	}
	n := w.node
	return func(ctx context.Context, updateID int64) (bool, error) {
		return n.MarkSeen(ctx, telegram.Name, strconv.FormatInt(updateID, 10))
	}
}
