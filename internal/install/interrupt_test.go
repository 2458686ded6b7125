package install

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestInterrupted(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel2()
	<-expired.Done()
	boom := errors.New("git clone: signal: killed")
	already := &InterruptedError{Detail: "the plugin was not updated. Local changes were restored.", Err: context.Canceled}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string // "" for err as it was
	}{
		{"no error", cancelled, nil, ""},
		{"cancelled", cancelled, boom, "interrupted: nothing was installed."},
		{"timeout is no interrupt", expired, boom, ""},
		{"live context", context.Background(), boom, ""},
		{"keeps a more precise detail", cancelled, already, already.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := interrupted(tt.ctx, tt.err, "nothing was installed.")
			var ie *InterruptedError
			switch {
			case tt.want == "" && got != tt.err:
				t.Fatalf("got %v, want the error as it was (%v)", got, tt.err)
			case tt.want != "" && (!errors.As(got, &ie) || got.Error() != tt.want || !errors.Is(got, context.Canceled)):
				t.Fatalf("got %v, want an InterruptedError %q", got, tt.want)
			}
		})
	}
}
