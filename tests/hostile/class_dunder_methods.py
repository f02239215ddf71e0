# expect: the transformation script may not define classes
# line: 1
class Evil:
    def __del__(self):
        pass
