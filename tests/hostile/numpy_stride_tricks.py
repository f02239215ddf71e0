# expect: AttributeError: module 'numpy' has no attribute 'lib'
# line: 1
view = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10 ** 9,), strides=(8,))
