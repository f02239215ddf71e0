# expect: the transformation script may not import 'socket'
# line: 1
import socket
socket.create_connection(("example.com", 80))
