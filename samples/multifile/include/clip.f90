! A helper in another file: f2loopy inlines it into the kernel that calls it.
pure real(8) function clip(x, lo)
  real(8), intent(in) :: x, lo
  clip = max(x, lo)
end function clip
