# expect: the transformation script may not import 'resource'
# line: 1
import resource
resource.setrlimit(resource.RLIMIT_CPU, (10 ** 6, 10 ** 6))
