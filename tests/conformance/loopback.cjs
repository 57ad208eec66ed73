// Preloaded with `node --require`: every TCP net.Server listens on 127.0.0.1 only.
//
// The conformance suite's scenario servers call `listen(0)` (all interfaces) and some
// read `server.address().port` on the next line, so the bind must stay synchronous:
// `listen(port, host)` would resolve the host asynchronously first. `_listen2` is what
// `listen` itself calls once it has an address (Node 22's net.js, in a primary process),
// so the loopback address goes straight there. Unix sockets, fds and handles pass through.
"use strict";
const net = require("net");

const LOOPBACK = "127.0.0.1";
const listen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
}

net.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  const first = args[0];
  let port;
  let backlog;
  if (first === undefined || first === null) {
    port = 0;
  } else if (isPort(first)) {
    port = Number(first);
    backlog = args.slice(1).find((arg) => typeof arg === "number");
  } else if (typeof first === "object" && first.path === undefined && first.fd === undefined && first.handle === undefined && first._handle === undefined) {
    port = isPort(first.port) ? Number(first.port) : 0;
    backlog = first.backlog;
  }
  if (port === undefined || typeof this._listen2 !== "function") {
    if (port !== undefined) {
      args = [port, LOOPBACK];
    }
    return listen.apply(this, callback ? [...args, callback] : args);
  }
  if (callback) {
    this.once("listening", callback);
  }
  this._listen2(LOOPBACK, port, 4, backlog || 511, undefined, 0);
  return this;
};
