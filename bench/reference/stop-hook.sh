#!/usr/bin/env bash
# Reference Stop hook in the seed prototype's shape (bash + python3): the
# same checks as `relay-baton hook stop`. Used only by the benchmarks.
exec python3 -c '
import json, os, re, sys
try:
    p = json.load(sys.stdin)
except Exception:
    sys.exit(0)
if p.get("stop_hook_active"):
    sys.exit(0)
sid = p.get("session_id", "")
if not re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", sid):
    sys.exit(0)
root = os.environ.get("CLAUDE_PROJECT_DIR") or p.get("cwd") or "."
d = os.path.join(root, ".claude", "session-chat", sid)
inbox = os.path.join(d, "inbox")
try:
    names = sorted(n for n in os.listdir(inbox) if n.endswith(".json"))
except FileNotFoundError:
    sys.exit(0)
for n in names:
    src = os.path.join(inbox, n)
    try:
        msg = json.load(open(src))
        os.makedirs(os.path.join(d, "delivered"), exist_ok=True)
        os.rename(src, os.path.join(d, "delivered", msg["id"] + ".json"))
    except Exception:
        continue
    print(json.dumps({"decision": "block", "reason": "Chat message from the user: " + msg["text"]}))
    break
'
