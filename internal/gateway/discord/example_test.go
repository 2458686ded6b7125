package discord_test

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

// How the gateway wires the adapter: options from the environment, the REST
// base from platforms.discord.extra.base_url (here the loopback fake), Run
// with the runner's handler, answers through Send.
func Example() {
	fake := discordfake.Start(func(format string, args ...any) { panic(fmt.Sprintf(format, args...)) })
	defer fake.Close()
	fake.AddChannel(discordfake.Channel{ID: "20", Type: discordfake.ChannelDM})

	env := map[string]string{"DISCORD_BOT_TOKEN": discordfake.Token}
	opts, err := discord.OptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		panic(err)
	}
	opts.BaseURL = fake.URL()
	a, err := discord.New(opts)
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan platform.Event, 1)
	done := make(chan error)
	go func() { done <- a.Run(ctx, func(_ context.Context, ev platform.Event) { got <- ev }) }()
	fake.Wait(ctx, "READY", func(v discordfake.View) bool { return v.Connected() })

	fake.MessageCreate(discordfake.MessageIn{ChannelID: "20", Author: discordfake.Author{ID: "30", Name: "alice"}, Content: "hello"})
	ev := <-got
	fmt.Println(ev.Kind, platform.SessionKey(ev.Source, platform.DefaultKeyOptions()), ev.Text)
	if _, err := a.Send(ctx, platform.Outbound{ChatID: ev.Source.ChatID, Text: "hi alice", ReplyTo: ev.MessageID}); err != nil {
		panic(err)
	}
	fake.Snapshot(func(v discordfake.View) { fmt.Println(v.Messages()[0].Content) })

	cancel()
	fmt.Println(<-done)
	// Output:
	// message agent:main:discord:dm:20 hello
	// hi alice
	// <nil>
}
