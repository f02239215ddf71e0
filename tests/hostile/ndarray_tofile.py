# expect: the transformation script may not access 'tofile'
# line: 1
np.zeros(3).tofile(TARGET)
