package room

import (
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// sayInline writes text as lines of r with their inline Markdown (a plan
// step's `file` and **words**) rendered on a coloured terminal.
func (p *printer) sayInline(r events.Role, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erasePulseLocked()
	p.r.InlineLines(r, text)
	p.lastOut = time.Now()
}
