package app

import "github.com/hermes-go/hermes/internal/home"

// ForHomeDir is a Factory like f whose HERMES_HOME is dir, outside any
// profile (a scratch home, as `hermes demo` uses); Close it when done.
func (f *Factory) ForHomeDir(dir string) *Factory {
	return f.ForHome(home.Home{Dir: dir, Profile: "custom"})
}
