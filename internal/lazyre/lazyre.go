// Package lazyre holds regular expressions that compile on first use.
//
// Every hermes command runs every package's initialisers, and Go compiles a
// package-level regexp.MustCompile there: dozens of them (a counted repeat such as
// {40} compiles into 40 copies) cost milliseconds of each start-up, mostly for
// commands that never match them.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled the first time it is used. An invalid
// expression panics then, as regexp.MustCompile would at start-up.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns a Regexp for expr; nothing is compiled yet.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Get compiles the expression once and returns it.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

func (r *Regexp) MatchString(s string) bool            { return r.Get().MatchString(s) }
func (r *Regexp) Match(b []byte) bool                  { return r.Get().Match(b) }
func (r *Regexp) FindString(s string) string           { return r.Get().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int       { return r.Get().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Get().FindStringSubmatch(s) }
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.Get().FindAllString(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Get().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Get().FindAllStringIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Get().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, f func(string) string) string {
	return r.Get().ReplaceAllStringFunc(src, f)
}
func (r *Regexp) SubexpIndex(name string) int                { return r.Get().SubexpIndex(name) }
func (r *Regexp) String() string                             { return r.expr }
func (r *Regexp) FindIndex(b []byte) []int                   { return r.Get().FindIndex(b) }
func (r *Regexp) FindAllIndex(b []byte, n int) [][]int       { return r.Get().FindAllIndex(b, n) }
func (r *Regexp) FindAll(b []byte, n int) [][]byte           { return r.Get().FindAll(b, n) }
func (r *Regexp) FindSubmatch(b []byte) [][]byte             { return r.Get().FindSubmatch(b) }
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte { return r.Get().FindAllSubmatch(b, n) }
func (r *Regexp) ReplaceAll(src, repl []byte) []byte         { return r.Get().ReplaceAll(src, repl) }
