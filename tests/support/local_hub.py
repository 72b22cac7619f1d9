#!/usr/bin/env python3
"""A Hugging Face Hub on 127.0.0.1 for posgeom's tests: standard library only, never the
real hub. It serves the repositories of a repos.json with the hub's answers as
huggingface_hub reads them:

  GET  /api/models/<repo>[/revision/<rev>]   {"id", "sha", "siblings": [{"rfilename"}]}
  GET  /api/models/<repo>/tree/<rev>[/<dir>] [{"type": "file", "path", "size", "oid", "lfs"}]
  HEAD/GET /<repo>/resolve/<rev>/<path>      X-Repo-Commit, ETag (a git blob id) and the
       bytes; an LFS file (.safetensors, .bin, .model) a 302 to /cdn/<sha256> with
       X-Linked-Etag (its SHA-256) and X-Linked-Size
  GET  /cdn/<sha256>                         the bytes, HTTP Range honoured, on a port of
       its own: the file store is another origin, as the hub's CDN is another host

Errors as the hub gives them (X-Error-Code): RepoNotFound (401 without a token, 404 with
one), RevisionNotFound and EntryNotFound (404), GatedRepo (401 without a token, 403 with a
wrong one). A private repo is RepoNotFound without the token.

repos.json: {"org/name": {"revisions": {"main": DIR, ...}, "gated": bool, "private": bool}}
with DIRs relative to it. A commit id is the SHA-1 of the repo, the revision's directory
and its files' digests, so the same files give the same commit every run.

control.json beside repos.json, read at every request (absent: none of it):
  {"throttle_bytes_per_s": N, "fail": {"<path>": {"after_bytes": K, "times": T}},
   "refuse": {"<path>": {"status": S, "times": T}}, "corrupt": ["<path>"],
   "linked_size": {"<path>": N}, "ignore_range": bool}
fail: the first T downloads of <path> send K bytes of it and drop the connection.
refuse: the first T downloads of <path> are answered S (503: busy; 403: an expired address).
corrupt: <path>'s bytes are sent with one byte changed. linked_size: the size it claims.

Every request is appended to requests.log beside repos.json as
"METHOD PATH range=<Range or -> auth=<yes|no>", for tests that count them.

Usage: local_hub.py REPOS_JSON --token TOKEN --port-file FILE
"""
import argparse
import hashlib
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

LFS_SUFFIXES = (".safetensors", ".bin", ".model")
CHUNK = 16384


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    def __init__(self, name, spec, base):
        self.name = name
        self.gated = spec.get("gated", False)
        self.private = spec.get("private", False)
        self.revisions = {}  # branch or tag -> commit
        self.commits = {}  # commit -> {path: file}
        for rev, folder in spec["revisions"].items():
            root = os.path.join(base, folder)
            files = {}
            for dirpath, _, names in os.walk(root):
                for n in names:
                    full = os.path.join(dirpath, n)
                    path = os.path.relpath(full, root).replace(os.sep, "/")
                    with open(full, "rb") as f:
                        data = f.read()
                    files[path] = {
                        "data": data,
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "blob": git_blob_id(data),
                        "lfs": path.endswith(LFS_SUFFIXES),
                    }
            h = hashlib.sha1(name.encode() + b"\0" + folder.encode())
            for path in sorted(files):
                h.update(path.encode() + b"\0" + files[path]["sha256"].encode())
            commit = h.hexdigest()
            self.revisions[rev] = commit
            self.commits[commit] = files

    def commit_of(self, rev):
        if rev in self.revisions:
            return self.revisions[rev]
        matches = [c for c in self.commits if c.startswith(rev)] if len(rev) >= 7 else []
        return matches[0] if len(matches) == 1 else None


class Hub:
    def __init__(self, repos_json, token):
        base = os.path.dirname(os.path.abspath(repos_json))
        with open(repos_json) as f:
            specs = json.load(f)
        self.repos = {name: Repo(name, spec, base) for name, spec in specs.items()}
        self.by_sha256 = {}
        for repo in self.repos.values():
            for files in repo.commits.values():
                for path, f in files.items():
                    self.by_sha256[f["sha256"]] = (path, f)
        self.token = token
        self.control_path = os.path.join(base, "control.json")
        self.log_path = os.path.join(base, "requests.log")
        self.lock = threading.Lock()
        self.turns_taken = {}

    def control(self):
        try:
            with open(self.control_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def log(self, line):
        with self.lock, open(self.log_path, "a") as f:
            f.write(line + "\n")

    def take_turn(self, kind, path, control):
        """control[kind][path] when it still has turns ("times", default 1) left, else None."""
        spec = control.get(kind, {}).get(path)
        if not spec:
            return None
        with self.lock:
            done = self.turns_taken.get((kind, path), 0)
            if done >= spec.get("times", 1):
                return None
            self.turns_taken[(kind, path)] = done + 1
        return spec


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub = None

    def log_message(self, *args):  # quiet: requests.log is the record
        pass

    # -- answers ------------------------------------------------------------------------
    def answer(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code, message):
        self.answer(status, json.dumps({"error": message}).encode(),
                    {"X-Error-Code": code, "X-Error-Message": message})

    def authorized(self):
        return self.headers.get("Authorization") == "Bearer " + self.hub.token

    def repo_or_error(self, name, for_files):
        repo = self.hub.repos.get(name)
        has_token = self.headers.get("Authorization") is not None
        if repo is None or (repo.private and not self.authorized()):
            self.error(404 if has_token else 401, "RepoNotFound", "Repository Not Found for url: " + self.path)
            return None
        if for_files and repo.gated and not self.authorized():
            if has_token:
                self.error(403, "GatedRepo", "Access to model " + name + " is restricted and you are not in the authorized list.")
            else:
                self.error(401, "GatedRepo", "Access to model " + name + " is restricted. You must have access to it and be authenticated to access it.")
            return None
        return repo

    def send_bytes(self, data, headers, path):
        control = self.hub.control()
        refused = self.hub.take_turn("refuse", path, control) if self.command == "GET" else None
        if refused:
            return self.error(refused["status"], "", "refused as control.json asks")
        if path in control.get("corrupt", []) and data:
            data = bytes([data[0] ^ 1]) + data[1:]
        start = 0
        status = 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and not control.get("ignore_range"):
            first = rng[len("bytes="):].split("-")[0]
            start = int(first) if first else 0
            if start >= len(data) and len(data) > 0:
                self.answer(416, b"", {"Content-Range": "bytes */%d" % len(data)})
                return
            status = 206
            headers = dict(headers, **{"Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))})
        body = data[start:]
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        failing = self.hub.take_turn("fail", path, control)
        fail_after = failing.get("after_bytes", 0) if failing else None
        rate = control.get("throttle_bytes_per_s", 0)
        sent = 0
        while sent < len(body):
            n = CHUNK
            if fail_after is not None:
                n = min(n, fail_after - sent)
                if n <= 0:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
            chunk = body[sent:sent + n]
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return
            sent += len(chunk)
            if rate:
                time.sleep(len(chunk) / rate)

    # -- routes -------------------------------------------------------------------------
    def route(self):
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        self.hub.log("%s %s range=%s auth=%s" % (self.command, self.path, self.headers.get("Range", "-"),
                                                  "yes" if self.headers.get("Authorization") else "no"))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            return self.api(parts[2] + "/" + parts[3], parts[4:])
        if parts[:1] == ["cdn"] and len(parts) == 2:
            found = self.hub.by_sha256.get(parts[1])
            if not found:
                return self.error(404, "EntryNotFound", "no such object")
            file_path, f = found
            return self.send_bytes(f["data"], {"ETag": '"%s"' % f["sha256"]}, file_path)
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]))
        self.error(404, "", "not a route of this hub: " + path)

    def api(self, name, rest):
        repo = self.repo_or_error(name, for_files=False)
        if repo is None:
            return
        rev = "main"
        tree = False
        if rest[:1] == ["revision"] and len(rest) >= 2:
            rev = "/".join(rest[1:])
        elif rest[:1] == ["tree"] and len(rest) >= 2:
            rev, tree = rest[1], True
        commit = repo.commit_of(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        files = repo.commits[commit]
        if tree:
            under = "/".join(rest[2:])
            entries = []
            for p, f in sorted(files.items()):
                if under and not p.startswith(under + "/"):
                    continue
                e = {"type": "file", "oid": f["blob"], "size": len(f["data"]), "path": p}
                if f["lfs"]:
                    e["lfs"] = {"oid": f["sha256"], "size": len(f["data"]), "pointerSize": 134}
                entries.append(e)
            return self.answer(200, json.dumps(entries).encode())
        info = {"id": name, "modelId": name, "sha": commit, "private": repo.private,
                "gated": "manual" if repo.gated else False,
                "siblings": [{"rfilename": p} for p in sorted(files)]}
        self.answer(200, json.dumps(info).encode())

    def resolve(self, name, rev, file_path):
        repo = self.repo_or_error(name, for_files=True)
        if repo is None:
            return
        commit = repo.commit_of(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        f = repo.commits[commit].get(file_path)
        if f is None:
            return self.error(404, "EntryNotFound", "Entry not found", )
        headers = {"X-Repo-Commit": commit, "ETag": '"%s"' % f["blob"]}
        if f["lfs"]:
            size = self.hub.control().get("linked_size", {}).get(file_path, len(f["data"]))
            headers.update({"X-Linked-Etag": '"%s"' % f["sha256"], "X-Linked-Size": str(size),
                            "Location": "http://127.0.0.1:%d/cdn/%s" % (self.hub.store_port, f["sha256"])})
            return self.answer(302, b"", headers, content_type="text/plain")
        self.send_bytes(f["data"], headers, file_path)

    def do_GET(self):
        self.route()

    def do_HEAD(self):
        self.route()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("repos_json")
    parser.add_argument("--token", default="hf_local_test_token")
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    Handler.hub = Hub(args.repos_json, args.token)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    store = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    store.daemon_threads = True
    Handler.hub.store_port = store.server_address[1]
    threading.Thread(target=store.serve_forever, daemon=True).start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
