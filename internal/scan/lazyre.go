package scan

import (
	"regexp"
	"sync"
)

// lre is a regular expression compiled on first use. The catalogue holds a few
// hundred expressions; compiled at package init they cost every hermes command
// ~25 ms and ~4 MB before main runs (GODEBUG=inittrace=1), though most commands never
// scan.
type lre struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func lazy(src string) *lre { return &lre{src: src} }

func (l *lre) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lre) String() string                             { return l.src }
func (l *lre) Match(b []byte) bool                        { return l.get().Match(b) }
func (l *lre) MatchString(s string) bool                  { return l.get().MatchString(s) }
func (l *lre) FindIndex(b []byte) []int                   { return l.get().FindIndex(b) }
func (l *lre) FindAllIndex(b []byte, n int) [][]int       { return l.get().FindAllIndex(b, n) }
func (l *lre) FindAll(b []byte, n int) [][]byte           { return l.get().FindAll(b, n) }
func (l *lre) FindSubmatch(b []byte) [][]byte             { return l.get().FindSubmatch(b) }
func (l *lre) FindAllSubmatch(b []byte, n int) [][][]byte { return l.get().FindAllSubmatch(b, n) }
func (l *lre) ReplaceAll(src, repl []byte) []byte         { return l.get().ReplaceAll(src, repl) }
