"""Carry MCP over a channel the host owns: here, pipes to a server process that the
host started itself. mcpc calls send() for each outgoing message; the host delivers
each message it reads, from a thread of its own."""
import subprocess
import threading

import libmcpc


class PipeTransport(libmcpc.Transport):
    def __init__(self, argv: list) -> None:
        super().__init__()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        threading.Thread(target=self.read_loop, daemon=True).start()

    def send(self, data: bytes) -> None:  # one JSON-RPC message; this channel frames by lines
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def close(self) -> None:  # the client closed: the server sees EOF and exits
        self.proc.stdin.close()

    def read_loop(self) -> None:
        for line in self.proc.stdout:
            try:
                self.deliver(line.rstrip(b"\n"))
            except libmcpc.ClosedError:
                break
        self.end("the server closed the channel")


transport = PipeTransport(["python3", "demo/server.py"])
with libmcpc.Client.transport(transport) as client:
    print("echo:", client.call("echo", {"text": "over the seam"}).text)
transport.proc.wait()
