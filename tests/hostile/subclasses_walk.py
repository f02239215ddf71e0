# expect: the transformation script may not access '__class__'
# line: 1
classes = ().__class__.__base__.__subclasses__()
