package main

var serveCommand = &command{Name: "serve", Usage: "[--port N] [--open]", Short: "Serve the localhost chat panel", Run: notYet}
