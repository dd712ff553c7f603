// The test desktop's wallpaper, in place of Plasma's org.kde.image (ServerLauncher.installPlasmaWallpaper says why):
// Plasma's default picture, read on the GUI thread as the item is made, so the desktop never waits on a load. It never
// sets `wallpaper.loading`, which is what holds plasmashell's "desktop" stage back.
import QtQuick 2.15

Rectangle {
    color: "#1d2b3a"

    Image {
        anchors.fill: parent
        asynchronous: false
        cache: false
        fillMode: Image.PreserveAspectCrop
        source: "file:///usr/share/wallpapers/Next/contents/images/1280x800.png"
    }
}
