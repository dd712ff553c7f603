// The desktop presenter over org.freedesktop.Notifications (issue 4).
