#!/usr/bin/env bash
# Reference idle-lane waiter in the seed prototype's shape: poll the inbox
# every second, claim the oldest message by rename, print it. Used only by
# the benchmarks. Usage: poll-wait.sh <session-chat dir> [interval]
d="$1"; interval="${2:-1}"
mkdir -p "$d/delivered"
while :; do
  for f in $(ls "$d/inbox" 2>/dev/null | grep '\.json$' | sort); do
    if mv "$d/inbox/$f" "$d/delivered/$f" 2>/dev/null; then
      python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"], flush=True)' "$d/delivered/$f"
    fi
  done
  sleep "$interval"
done
