// Command fakellm serves a scripted chat-completions conversation on a loopback port,
// for trying `hermes chat` by hand or from a shell benchmark without a model:
//
//	go run ./internal/llm/llmtest/cmd/fakellm --script replies.yaml --addr-file url.txt &
//	# config.yaml: model: {default: fake, base_url: <the URL in url.txt>}
//
// The script is what llmtest.ReadScript reads: {"replies": [...]} or a bare list of
// llmtest.Reply. The base URL (ending in /v1) is printed on stdout and written to
// --addr-file. It serves until interrupted, or until every reply is used when
// --exit-when-done is set.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

func main() {
	script := flag.String("script", "", "reply script (JSON or YAML)")
	addrFile := flag.String("addr-file", "", "write the base URL to this file")
	requests := flag.String("requests", "", "append every request body to this file (JSON lines)")
	repeat := flag.Bool("repeat", false, "serve the script again and again (for benchmarks)")
	exitWhenDone := flag.Bool("exit-when-done", false, "exit once every reply has been served")
	flag.Parse()
	if *script == "" {
		fmt.Fprintln(os.Stderr, "fakellm: --script FILE is required")
		os.Exit(2)
	}
	replies, err := llmtest.ReadScript(*script)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
	srv := llmtest.Start()
	defer srv.Close()
	if *requests != "" {
		f, err := os.OpenFile(*requests, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
		defer f.Close()
		srv.RecordTo(f)
	}
	srv.Enqueue(replies...)
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(srv.URL+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
	}
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sig:
			return
		case <-tick.C:
			if srv.Pending() == 0 {
				if *repeat {
					srv.Enqueue(replies...)
				} else if *exitWhenDone {
					time.Sleep(100 * time.Millisecond) // let the last answer finish writing
					return
				}
			}
		}
	}
}
