! Kernels of the reduction test, as module procedures (OP2's Fortran style: explicit-shape and
! scalar dummies, one per loop argument).
module reduction_kernels
  implicit none
  private
  public :: count_cell, count_edge, edge_extremes, cell_index

contains

  ! Direct: zero the cell's residual and count the cell.
  subroutine count_cell(res, ncells)
    real(8), dimension(4), intent(out) :: res
    integer(4), intent(inout) :: ncells
    res = 0.0_8
    ncells = ncells + 1
  end subroutine count_cell

  ! Indirect: touch both cells of the edge (INC) and count the edge.
  subroutine count_edge(res1, res2, nedges)
    real(8), dimension(4), intent(inout) :: res1, res2
    integer(4), dimension(1), intent(inout) :: nedges
    res1(1) = res1(1) + 1.0_8
    res2(1) = res2(1) + 1.0_8
    nedges(1) = nedges(1) + 1
  end subroutine count_edge

  ! The smallest and largest cell number an edge reaches (through op_arg_idx, 1-based), the sum
  ! of both, and where the largest was seen (op_arg_info follows the MAX global).
  subroutine edge_extremes(c1, c2, lo, hi, total, e, where)
    integer(4), intent(in) :: c1, c2, e
    integer(4), intent(inout) :: lo, hi, where
    real(8), intent(inout) :: total
    lo = min(lo, c1, c2)
    if (max(c1, c2) > hi) then
      hi = max(c1, c2)
      where = e
    end if
    total = total + real(c1 + c2, 8)
  end subroutine edge_extremes

  ! The element's own index (1-based) stored in a dat.
  subroutine cell_index(i, stored)
    integer(4), intent(in) :: i
    integer(4), intent(out) :: stored
    stored = i
  end subroutine cell_index

end module reduction_kernels
