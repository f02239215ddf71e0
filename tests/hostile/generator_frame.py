# expect: the transformation script may not access 'gi_frame'
# line: 2
gen = (x for x in [1])
frame = gen.gi_frame
