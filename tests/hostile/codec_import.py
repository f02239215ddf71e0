# expect: the transformation script may not import 'encodings.idna'
# line: 1
s = "example".encode("idna")
