package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/go-telegram/bot"
)

// call posts params to a Bot API method as one JSON body and decodes the
// result into dest (nil: ignored). The hot methods (sendMessage,
// sendChatAction) go through it rather than the library, which builds a
// multipart form in a goroutine of its own for every request, streamed
// through a pipe (chunked, with no length). Errors read as the library's (its
// sentinel errors, *bot.TooManyRequestsError), so callers treat both alike.
func (a *Adapter) call(ctx context.Context, method string, params, dest any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("error encode request for method %s, %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.o.BaseURL+"/bot"+a.o.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("error create request for method %s, %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("error do request for method %s, %w", method, err)
	}
	defer resp.Body.Close()
	// An answer is a message at most; 16 MiB bounds a hostile server.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("error read response body for method %s, %w", method, err)
	}
	var ans struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
		ErrorCode   int             `json:"error_code"`
		Parameters  struct {
			RetryAfter      int `json:"retry_after"`
			MigrateToChatID int `json:"migrate_to_chat_id"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("%s answered %s with something that is not the Bot API's JSON: %w", method, resp.Status, err)
	}
	if !ans.OK {
		return apiError(method, ans.ErrorCode, ans.Description, ans.Parameters.RetryAfter, ans.Parameters.MigrateToChatID)
	}
	if dest != nil {
		if err := json.Unmarshal(ans.Result, dest); err != nil {
			return fmt.Errorf("error decode response result for method %s, %w", method, err)
		}
	}
	return nil
}

// apiError is a refusal as the library reports it.
func apiError(method string, code int, desc string, retryAfter, migrateTo int) error {
	switch code {
	case http.StatusForbidden:
		return fmt.Errorf("%w, %s", bot.ErrorForbidden, desc)
	case http.StatusBadRequest:
		if migrateTo != 0 {
			return &bot.MigrateError{Message: fmt.Sprintf("%s: %s", bot.ErrorBadRequest, desc), MigrateToChatID: migrateTo}
		}
		return fmt.Errorf("%w, %s", bot.ErrorBadRequest, desc)
	case http.StatusUnauthorized:
		return fmt.Errorf("%w, %s", bot.ErrorUnauthorized, desc)
	case http.StatusNotFound:
		return fmt.Errorf("%w, %s", bot.ErrorNotFound, desc)
	case http.StatusConflict:
		return fmt.Errorf("%w, %s", bot.ErrorConflict, desc)
	case http.StatusTooManyRequests:
		return &bot.TooManyRequestsError{Message: fmt.Sprintf("%s, %s", bot.ErrorTooManyRequests, desc), RetryAfter: retryAfter}
	}
	return fmt.Errorf("error response from telegram for method %s, %d %s", method, code, desc)
}
