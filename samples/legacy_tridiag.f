C=======================================================================
C     Batched tridiagonal solves (Thomas algorithm), one system per
C     column: legacy fixed-form Fortran 77 that f2loopy translates as it
C     is -- implicit typing, labelled DO loops, continuation lines, a
C     PARAMETER and a DATA statement, an early RETURN, a backward loop,
C     F77 specific intrinsics and card sequence numbers in columns 73-80.
C
C     On entry A, B, C hold the sub-, main and super-diagonals and D the
C     right-hand sides; on exit X holds the solutions (C is overwritten
C     with the elimination factors, as LAPACK's DGTSV does).
C=======================================================================
      SUBROUTINE TRISOL(N, M, A, B, C, D, X)                            TRI00010
      IMPLICIT DOUBLE PRECISION (A-H, O-Z)                              TRI00020
      DIMENSION A(N, M), B(N, M), C(N, M), D(N, M), X(N, M)             TRI00030
      PARAMETER (TINY = 1.0D-30)                                        TRI00040
      DATA ONE /1.0D0/                                                  TRI00050
*     nothing to solve                                                  TRI00060
      IF (N .LT. 1) RETURN                                              TRI00070
      DO 40 J = 1, M                                                    TRI00080
         BET = B(1, J)                                                  TRI00090
         IF (DABS(BET) .LT. TINY) BET = TINY                            TRI00100
         X(1, J) = D(1, J) / BET                                        TRI00110
C        forward elimination                                            TRI00120
         DO 10 I = 2, N                                                 TRI00130
            C(I-1, J) = C(I-1, J) * (ONE / BET)                         TRI00140
            BET = B(I, J) - A(I, J)*C(I-1, J)                           TRI00150
            IF (DABS(BET) .LT. TINY) BET = TINY                         TRI00160
            X(I, J) = (D(I, J) -                                        TRI00170
     &                 A(I, J)*X(I-1, J)) / BET                         TRI00180
   10    CONTINUE                                                       TRI00190
C        back substitution                                              TRI00200
         DO 20 I = N - 1, 1, -1                                         TRI00210
            X(I, J) = X(I, J) - C(I, J)*X(I+1, J)                       TRI00220
   20    CONTINUE                                                       TRI00230
   40 CONTINUE                                                          TRI00240
      RETURN                                                            TRI00250
      END                                                               TRI00260
