// Package render is where untrusted text meets output: one sanitizer
// (Inert), one truncation helper (Cut) and one renderer per medium.
//
//	agents / transcript.Tail ─► events.Activity ─┬─► Terminal (room, tail, send --follow)
//	                                               ├─► Stream   (tail: buffered Terminal or JSON lines)
//	                                               └─► Panel    (server's SSE stream)
//	events.Event (conversation.jsonl) ─► room.Replay ─► Inert
//
// Terminal writes lines with a speaker's gutter on every line; Panel maps an
// activity onto the page's SSE vocabulary. Both pass every string of
// content through Inert, so no control byte of an agent's output, a
// transcript or a chat message drives a terminal or reaches the page. It
// imports events and fatih/color only.
package render
