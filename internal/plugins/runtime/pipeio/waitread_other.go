//go:build !linux

package pipeio

import (
	"os"
	"sync/atomic"
)

var callsWaiting atomic.Int32

type waitReader struct{ f *os.File }

func newWaitReader(*os.File) *waitReader { return nil }

func (r *waitReader) Read(p []byte) (int, error) { return r.f.Read(p) }

func (r *waitReader) setEager(bool) {}
