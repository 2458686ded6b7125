package cli

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/chatui"
)

// useScreen reports whether an interactive `hermes chat` runs the full-screen
// chat: stdin and stdout are terminals and nothing asks for the line mode
// (--plain, HERMES_CHAT_PLAIN, CI, TERM=dumb).
func useScreen(opts *chatOptions) bool {
	f := opts.Factory
	switch {
	case opts.Query != "" || opts.Plain || !opts.IO.InTTY || !opts.IO.OutTTY:
		return false
	case app.Truthy(f.Env("HERMES_CHAT_PLAIN")), app.Truthy(f.Env("CI")), f.Env("TERM") == "dumb":
		return false
	}
	return true
}

// newScreen is the screen being built.
type newScreen struct {
	scr *chatui.Screen
	err error
}

// startScreen builds the screen (the history file, the editor: 1-2 ms on a
// cold process) on a goroutine of its own, beside the host's start and the
// plugins' load; ctx is the screen's for its whole run. The factory is read
// here, on the caller's goroutine.
func startScreen(ctx context.Context, opts *chatOptions) <-chan newScreen {
	ch := make(chan newScreen, 1)
	f := opts.Factory
	hm, err := f.Home()
	if err != nil {
		ch <- newScreen{err: err}
		return ch
	}
	cmds := make([]chatui.Command, 0, len(builtinSlash))
	for _, b := range builtinSlash {
		cmds = append(cmds, chatui.Command{Name: b.name, Args: b.args, Help: b.help})
	}
	o := chatui.Options{In: opts.IO.In, Out: opts.IO.Out, Env: f.Environ(), Color: f.Color(),
		HistoryPath: filepath.Join(hm.Dir, "chat_history"), Commands: cmds, Cwd: f.Cwd, Home: f.Env("HOME")}
	go func() {
		scr, err := chatui.New(ctx, o)
		ch <- newScreen{scr, err}
	}()
	return ch
}

// chatScreen runs the interactive chat on the terminal screen (internal/chatui).
func chatScreen(ctx context.Context, opts *chatOptions, h *app.Host, started <-chan newScreen) error {
	f := opts.Factory
	ns := <-started
	if ns.err != nil {
		return ns.err
	}
	scr := ns.scr
	restore := f.Logs().Redirect(scr.Stderr())
	pr := scr.Prompter()
	pr.Redact = f.Redactor().String
	// The chat is opened while the screen draws its first frame (chatui.Screen.Run).
	var chat *app.Chat
	err := scr.Run(ctx, func(ctx context.Context) (chatui.Chat, error) {
		c, err := h.NewChat(ctx, app.ChatOptions{
			Model: opts.Model, Provider: opts.Provider, Toolsets: opts.Toolsets, NoStream: opts.NoStream, Resume: opts.Resume,
			Output: scr.Output(), Inject: scr.Inject, Prompter: pr,
		})
		if err != nil {
			return nil, err
		}
		chat = c
		return c, nil
	}, func(ctx context.Context, line string) chatui.CommandResult {
		return screenCommand(ctx, chat, line)
	})
	// Before the chat closes: what its end writes (on_session_finalize's plugins) reaches the terminal.
	restore()
	if chat != nil {
		chat.Close()
	}
	return err
}

// screenCommand runs a slash command through the line mode's command code,
// its output captured for the transcript.
func screenCommand(ctx context.Context, chat *app.Chat, line string) chatui.CommandResult {
	var buf bytes.Buffer
	cs := &chatSession{io: &app.IOStreams{Out: &buf, Err: &buf}, chat: chat}
	err := cs.slash(ctx, line)
	res := chatui.CommandResult{Output: buf.String(), Retry: cs.retry}
	switch {
	case errors.Is(err, errQuit):
		res.Quit = true
	case err != nil:
		res.Err = err
	}
	return res
}
