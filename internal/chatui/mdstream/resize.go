package mdstream

// SetWidth makes what is still to come (the tail, the open block and the
// blocks after it) render at width columns, for a terminal that was
// resized mid-answer. Lines already returned stay as they were: they are in
// the terminal's scrollback, which hermes cannot redraw.
func (s *Stream) SetWidth(width int) {
	w := Options{Width: width}.width()
	if w == s.o.Width {
		return
	}
	s.o.Width = w
	s.r = rendererFor(w, s.o.Color)
	if s.code != nil {
		s.code.width = w
	}
	s.tailValid = false
}
