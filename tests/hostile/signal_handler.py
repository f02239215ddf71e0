# expect: the transformation script may not import 'signal'
# line: 1
import signal
signal.signal(signal.SIGALRM, signal.SIG_IGN)
