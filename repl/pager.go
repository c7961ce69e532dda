package repl

// A program the room hands the terminal to (the pager, the editor) gets
// the whole screen: the pinned panel's scroll region would otherwise hold
// it above the panel's rows, where a pager's first lines scroll out of
// reach. The panel is pinned again when the program ends (Reapply).

// Suspend resets the scroll region and erases the panel's rows; the panel
// is not drawn again (a resize included) until Reapply.
func (pp *pinnedPanel) Suspend() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.height == 0 {
		return
	}
	pp.unpinLocked()
	pp.suspended = true
}
